"""The README's first Python example runs with the declared dependencies alone (NumPy), as written."""
import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).parent.parent.parent / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_first_python_example_runs_without_optional_dependencies():
    code = python_blocks()[0]
    # Block the optional frameworks so that an import of any of them fails the example.
    guard = ("import sys\nfor m in ('torch', 'cupy', 'jax', 'ml_dtypes', 'matplotlib'):\n    sys.modules[m] = None\n")
    r = subprocess.run([sys.executable, "-c", guard + code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "1"
