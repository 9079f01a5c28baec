"""Print the derivative srctrans generates for a function in a Python file.

Usage::

    srctrans FILE.py:FUNCTION [--wrt NAMES_OR_INDICES] [--mode reverse|forward|batch]
             [--vmap IN_AXES] [--args EXPR] [--no-optimize] [--traceback]
    srctrans export FILE.py:FUNCTION [--wrt ...] [--mode reverse|forward] [--vmap IN_AXES]
                    [--args EXPR] -o OUT.py
    srctrans cache [--clear]
    python -m srctrans FILE.py:FUNCTION ...

``export`` writes the derivative as a standalone module that needs only NumPy
(see :func:`srctrans.export`) instead of printing it. On a terminal, the
printed code is highlighted when Pygments is installed.

``cache`` prints where the persistent cache is (or that it is off), how many
derivatives it holds and their size; ``--clear`` deletes them.

``--vmap IN_AXES`` (comma-separated ints or None, one per argument, or one for all)
prints the batched code ``st.vmap`` runs, for the batched example arguments ``--args``
gives: of the gradient in reverse mode (per-example gradients), of the function
itself with ``--mode batch`` (whose ``IN_AXES`` default to 0).

``FUNCTION`` may be dotted to reach a method (``model.py:Model.loss``); for a
method defined with ``def`` in a class, indices count the parameters after
``self``, as for a bound method. ``--wrt`` takes comma-separated parameter
names or indices (``--wrt 0,w``): one entry selects one argument, several a
tuple; the default is the first argument. The source goes to stdout. The file
is imported under a private module name (so its ``if __name__ ==
"__main__":`` block does not run), with its directory on ``sys.path`` so it
can import its siblings.

The file is imported: its top-level code runs, as ``python -c "import
FILE"`` would run it; run the command only on files you trust.

Any error -- a missing file, a file that fails to import, an unknown
function, code srctrans cannot differentiate, a failure of srctrans itself --
is one line on stderr, ``srctrans: error: ...``, and exit status 2.
``--traceback`` (or ``SRCTRANS_TRACEBACK=full``) shows the full traceback
instead.

>>> main(["samples/mlp.py:loss", "--wrt", "w1,b1"])      # doctest: +SKIP
def loss_fwd(w1, b1, w2, b2, x, y):
...
"""

import argparse
import importlib.util
import inspect
import itertools
import os
import re
import sys
import types

import numpy

import srctrans
from srctrans.errors import SrcTransError

MODES = ("reverse", "forward")          # --mode choices; the first is the default

_module_numbers = itertools.count()


class CliError(Exception):
    """A user error the command line reports in one line."""


def main(argv=None):
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["cache"]:
        return _cache_command(argv[1:])
    exporting = argv[:1] == ["export"]
    parser = _export_parser() if exporting else _parser()
    try:
        args = parser.parse_args(argv[1:] if exporting else argv)
    except SystemExit as exit_:          # usage errors (2), --help and --version (0)
        return exit_.code
    if args.traceback:
        os.environ["SRCTRANS_TRACEBACK"] = "full"     # srctrans's own frames, original errors
    try:
        fn, is_method, module = _load_function(args.target)
        wrt = _parse_wrt(args.wrt, shift=1 if is_method else 0)
        example = _example_arguments(args.args, module)
        if not exporting and (args.vmap is not None or args.mode == "batch"):
            text = _batched_source(fn, args, wrt, example)
            text = _highlighted(text) if _colour() else text
        elif exporting and args.vmap is not None:
            srctrans.export(srctrans.vmap(fn, in_axes=_parse_axes(args.vmap)), args.output,
                            args=example)
            text = f"wrote {args.output}"
        elif exporting:
            srctrans.export(fn, args.output, wrt=wrt, mode=args.mode, args=example)
            text = f"wrote {args.output}"
        else:
            text = srctrans.source(fn, mode=args.mode, wrt=wrt, optimize=args.optimize,
                                   args=example)
            text = _highlighted(text) if _colour() else text
    except SrcTransError as error:
        if args.traceback:
            raise
        return _fail("; ".join(line.strip() for line in str(error).splitlines()))
    except CliError as error:
        return _fail(str(error))
    except Exception as error:           # raised by the user's code (run on --args)
        if args.traceback:
            raise
        notes = "".join(f"; {note.removeprefix('srctrans: ')}"
                        for note in getattr(error, "__notes__", ()))
        return _fail(f"{_describe(error)}{notes}")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _batched_source(fn, args, wrt, example):
    """The text ``--vmap`` prints: ``st.source`` of ``st.vmap`` of the function (``--mode
    batch``) or of its gradient (reverse mode), for the batched ``--args``."""
    if example is None:
        raise CliError("--vmap and --mode batch need the batched example arguments: --args")
    if args.mode == "forward":
        raise CliError("--vmap prints the batched gradient (reverse mode) or the batched "
                       "function (--mode batch); forward mode is not batched here")
    in_axes = _parse_axes(args.vmap or "0")
    target = fn if args.mode == "batch" else srctrans.grad(fn, wrt=wrt)
    return srctrans.source(srctrans.vmap(target, in_axes=in_axes), args=example)


def _parse_axes(text):
    """``"None,0,0"`` -> ``(None, 0, 0)``; one entry -> that entry for every argument."""
    axes = []
    for part in (p.strip() for p in text.split(",")):
        if part == "None":
            axes.append(None)
        elif re.fullmatch(r"-?\d+", part):
            axes.append(int(part))
        else:
            raise CliError(f"--vmap {text!r}: each entry is an int or None")
    return axes[0] if len(axes) == 1 else tuple(axes)


def _cache_command(argv):
    """``srctrans cache [--clear]``: where the persistent cache is, and what it holds."""
    parser = argparse.ArgumentParser(
        prog="srctrans cache",
        description="Show where the persistent cache of built derivatives is and what it holds.",
        epilog="SRCTRANS_CACHE_DIR chooses the directory; set and empty, it switches the cache off.")
    parser.add_argument("--clear", action="store_true", help="delete every entry")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code
    from srctrans.persist import directory
    place = directory.location()
    if place is None:
        configured = directory.configured()
        why = "SRCTRANS_CACHE_DIR is set and empty" if configured is None else \
            f"{configured} cannot be used (see the warning above)"
        sys.stdout.write(f"the persistent cache is off: {why}\n")
        return 0
    if args.clear:
        sys.stdout.write(f"{place}: deleted {_entries(directory.clear(place))}\n")
        return 0
    count, size = directory.usage(place)
    sys.stdout.write(f"{place}: {_entries(count)}, {size / 2**20:.1f} MiB "
                     f"(bounds: {directory.MAX_ENTRIES} entries, "
                     f"{directory.MAX_BYTES / 2**20:.0f} MiB; the least recently used go "
                     f"beyond either)\n")
    return 0


def _entries(count):
    return f"{count} entry" if count == 1 else f"{count} entries"


_ARGS_HELP = ("example arguments, written as in a call and evaluated in FILE's namespace "
              "(np is NumPy): --args 'np.ones((4, 3)), 0.5'")


def _example_arguments(text, module):
    """The tuple of arguments ``text`` (``"a, b"``, as in a call) gives in ``module``'s
    namespace, or None without ``text``."""
    if text is None:
        return None
    namespace = {"np": numpy, **vars(module)}
    try:
        return eval(f"({text},)", namespace)         # the user's own expression, on their files
    except Exception as error:
        raise CliError(f"--args {text!r}: {_describe(error)}") from None


def _parser():
    parser = argparse.ArgumentParser(
        prog="srctrans", description="Print the generated derivative of a Python function.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="other commands:\n"
               "  srctrans export FILE.py:FUNCTION -o OUT.py   write the derivative as a module\n"
               "                                               that needs only NumPy\n"
               "  srctrans cache [--clear]                     show (or empty) the persistent cache\n"
               "\nThe file is imported to find the function: its top-level code runs, as\n"
               "`python -c 'import FILE'` would run it (its `if __name__ == \"__main__\":`\n"
               "block does not). Run it only on files you trust. Colour is used on a terminal\n"
               "unless NO_COLOR is set or TERM is dumb.")
    parser.add_argument("target", metavar="FILE.py:FUNCTION",
                        help="the file and the function (dotted for a method: Model.loss)")
    parser.add_argument("--wrt", metavar="ARGS",
                        help="comma-separated parameter names or indices (default: the first)")
    parser.add_argument("--mode", choices=MODES + ("batch",), default=MODES[0],
                        help=f"which derivative to print (default: {MODES[0]}); batch: the "
                             f"function itself, batched (with --vmap and --args)")
    parser.add_argument("--vmap", metavar="IN_AXES",
                        help="print the batched code st.vmap runs (comma-separated ints or "
                             "None per argument, or one for all): of the gradient, or of the "
                             "function with --mode batch; needs --args (the batched arguments)")
    parser.add_argument("--args", metavar="EXPR", help=_ARGS_HELP + "; prints the code a call "
                        "with them runs (specialised on their shapes)")
    parser.add_argument("--no-optimize", dest="optimize", action="store_false",
                        help="print the code before the optimisation passes")
    parser.add_argument("--traceback", action="store_true",
                        help="on an error, show the full traceback, srctrans's own frames "
                             "included (the same as SRCTRANS_TRACEBACK=full)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {srctrans.__version__}")
    return parser


def _export_parser():
    parser = argparse.ArgumentParser(
        prog="srctrans export",
        description="Write a function's derivative as a standalone module that needs only NumPy.",
        epilog="The file is imported to find the function: its top-level code runs. Run it "
               "only on files you trust.")
    parser.add_argument("target", metavar="FILE.py:FUNCTION", help="the file and the function")
    parser.add_argument("--wrt", metavar="ARGS",
                        help="comma-separated parameter names or indices (default: the first)")
    parser.add_argument("--mode", choices=MODES, default=MODES[0],
                        help=f"reverse: NAME_fwd, NAME_bwd and NAME_grad; forward: NAME_jvp "
                             f"(default: {MODES[0]})")
    parser.add_argument("--args", metavar="EXPR", help=_ARGS_HELP + "; the module's NAME_grad "
                        "is then the fused gradient specialised on their shapes")
    parser.add_argument("--vmap", metavar="IN_AXES",
                        help="write the batched function st.vmap runs instead (ints or None "
                             "per argument, comma-separated); needs --args, the batched ones")
    parser.add_argument("-o", "--output", metavar="OUT.py", required=True,
                        help="the module to write")
    parser.add_argument("--traceback", action="store_true",
                        help="on an error, show the full traceback")
    return parser


def _colour():
    """Whether to colour the output: a terminal, without ``NO_COLOR`` (no-color.org) or a
    ``TERM`` of ``dumb``."""
    return (sys.stdout.isatty() and not os.environ.get("NO_COLOR")
            and os.environ.get("TERM") != "dumb")


def _highlighted(text):
    """``text`` coloured for a terminal when Pygments is installed (else as it is): comments
    (the user's lines) in cyan and strings in red, readable on light and dark backgrounds
    alike (Pygments' own grey comments and yellow strings fade on a white one)."""
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.formatters.terminal import TERMINAL_COLORS
        from pygments.lexers import PythonLexer
        from pygments.token import Comment, String, Whitespace
    except ImportError:
        return text
    colours = dict(TERMINAL_COLORS)
    colours[Comment] = ("cyan", "brightcyan")
    colours[String] = ("red", "brightred")
    colours[Whitespace] = ("", "")
    return highlight(text, PythonLexer(), TerminalFormatter(bg=_background(),
                                                            colorscheme=colours))


def _background():
    """``"dark"`` when the terminal says its background is dark (``COLORFGBG``, as rxvt, xterm
    and others set it: ``"15;0"``), else ``"light"``."""
    background = os.environ.get("COLORFGBG", "").split(";")[-1]
    return "dark" if background in ("0", "1", "2", "3", "4", "5", "6", "8") else "light"


def _fail(message):
    print(f"srctrans: error: {message}", file=sys.stderr)
    return 2


def _parse_wrt(text, shift):
    """The ``wrt`` argument of :func:`srctrans.source` for ``--wrt text``.

    ``shift`` is added to indices from the front: 1 for a method, whose
    ``self`` is not counted.
    """
    if text is None:
        return shift
    entries = [entry.strip() for entry in text.split(",")]
    if not all(entries):
        raise CliError(f"--wrt {text!r} has an empty entry; give names or indices separated by commas")
    selected = tuple(_index(e, shift) if re.fullmatch(r"-?\d+", e) else e for e in entries)
    return selected[0] if len(selected) == 1 else selected


def _index(entry, shift):
    index = int(entry)
    return index + shift if index >= 0 else index


def _load_function(target):
    """``(function, is_method, module)`` for ``FILE.py:NAME[.NAME...]``."""
    path, colon, qualname = target.rpartition(":")
    if not colon or not path or not qualname:
        raise CliError(f"{target!r} names no function; write FILE.py:FUNCTION")
    module = _import_file(path)
    owner, found, reached = None, module, []
    for part in qualname.split("."):
        if not hasattr(found, part):
            where = f"{path}:{'.'.join(reached)}" if reached else path
            raise CliError(f"{where} has no attribute {part!r}")
        owner, found = found, getattr(found, part)
        reached.append(part)
    where = f"{path}:{qualname}"
    if not inspect.isfunction(found) and not inspect.ismethod(found):
        unwrapped = inspect.unwrap(found) if callable(found) else found
        if not inspect.isfunction(unwrapped):      # st.grad(f) and the like stand for f
            raise CliError(f"{where} is a {type(found).__name__}, not a function defined with def")
        found = unwrapped
    is_method = (inspect.isclass(owner) and
                 isinstance(inspect.getattr_static(owner, reached[-1]), types.FunctionType))
    return found, is_method, module


def _import_file(path):
    """Import the file at ``path`` as a fresh module, with its directory on sys.path."""
    if not os.path.isfile(path):
        raise CliError(f"no such file: {path}")
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"_srctrans_cli_{next(_module_numbers)}_{stem}"
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(path))
    if spec is None:
        raise CliError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:
        del sys.modules[name]
        raise CliError(f"cannot import {path}: {_describe(error)}") from None
    finally:
        sys.path.remove(directory)
    return module


def _describe(error):
    if isinstance(error, SyntaxError):
        return f"{error.__class__.__name__} at line {error.lineno}: {error.msg}"
    detail = " ".join(str(error).split())
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__
