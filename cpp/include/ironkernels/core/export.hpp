#pragma once
// Symbol visibility: the library builds with hidden visibility, and the public namespace (opened as
// `namespace IRONKERNELS_EXPORT ironkernels`) and the few internals its tests call are exported;
// header-only helpers each user compiles for itself stay hidden (IRONKERNELS_HIDDEN).
#if defined(_WIN32)
#define IRONKERNELS_EXPORT
#define IRONKERNELS_HIDDEN
#else
#define IRONKERNELS_EXPORT __attribute__((visibility("default")))
#define IRONKERNELS_HIDDEN __attribute__((visibility("hidden")))
#endif
