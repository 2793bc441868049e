#pragma once
// Development overrides of the kernels' dispatch (tests and bench sweeps), read in this one place.
// Each is an IRONKERNELS_FWT_* variable named where it is read, and honoured only in a process that
// also sets IRONKERNELS_DEV_OVERRIDES=1: a user's environment cannot change production dispatch.

#include "ironkernels/core/export.hpp"

namespace ironkernels::detail {

/// The override `name`'s value, or nullptr (unset, or overrides not enabled). Exported: the bench
/// tools launch the kernels' own dispatch.
IRONKERNELS_EXPORT const char* dev_override(const char* name);
/// The override `name` read as an integer, or `fallback` where dev_override(name) is nullptr.
IRONKERNELS_EXPORT int dev_override_int(const char* name, int fallback);

}  // namespace ironkernels::detail
