"""The readers' command line, ``python -m examples`` (``--help`` lists its commands).

python -m examples               print the practice's 9 output lines, computed live
python -m examples turnaround    time the section's turnaround table on this machine and
                                 print it beside the table recorded on a GPU
python -m examples verify        run every block the book shows with its output (or only the
                                 block ids given after it): does this machine print the same?
python -m examples sweep         time K weight settings tried one by one and at once on this
                                 machine, beside the sweep recorded on a GPU when one ships
python -m examples --version     name every section with its version, this package's
                                 version and its site
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from typing import NoReturn

from .about import about


def _print_measured(label: str, table: str, findings: list[str], what: str, cost_s: float) -> None:
    print(f"Measured on this machine: {label}\n")
    print(table)
    print()
    for finding in findings:
        print(f"- {finding}")
    print(f"\nMeasuring the whole {what} took {cost_s:.2f} s.")


def _print_recorded(caption: str, table: str, sentences: list[str]) -> None:
    print(f"\n{caption}\n")
    print(table)
    print()
    for sentence in sentences:
        print(f"- {sentence}")


def name_an_unused_gpu() -> None:
    """Where an NVIDIA GPU is present but JAX computes on the CPU, say so in one line, on stderr
    (stdout stays what the commands compare and record), with the line that installs the GPU
    extra."""
    import jax

    from .about import gpu_install_line
    from .backend import nvidia_gpus

    gpus = nvidia_gpus()
    if gpus and jax.default_backend() != "gpu":
        print(
            f"An NVIDIA GPU is present ({', '.join(sorted(set(gpus)))}), but JAX runs on the "
            f"{jax.default_backend()}; for JAX on the GPU, install: {gpu_install_line()}",
            file=sys.stderr,
        )


def turnaround() -> None:
    from .findings import turnaround_findings
    from .recorded import compare_with_recorded, latest_recorded
    from .turnaround import measure_turnaround, turnaround_markdown

    print(f"{about()}\n")
    measured = measure_turnaround()
    findings = turnaround_findings(measured)
    _print_measured(
        measured.label, turnaround_markdown(measured), findings, "table", measured.cost_s
    )
    recorded = latest_recorded()
    if recorded is not None:
        compared = compare_with_recorded(measured, recorded, here="this machine")
        _print_recorded(recorded.caption(), turnaround_markdown(recorded.turnaround), compared)


def verify(block_ids: list[str]) -> int:
    from .verify import main as verify_blocks

    print(f"{about()}\n")
    return verify_blocks(block_ids)


def sweep() -> None:
    from .findings import sweep_findings
    from .recorded import latest_recorded_sweep
    from .sweep import measure_settings_sweep, sweep_markdown

    print(f"{about()}\n")
    measured = measure_settings_sweep()
    findings = sweep_findings(measured)
    _print_measured(measured.label, sweep_markdown(measured), findings, "sweep", measured.cost_s)
    recorded = latest_recorded_sweep()
    if recorded is None:
        print("\nNo GPU recording of this sweep ships with this package (benchmarks/gpu_check.sh")
        print("records one on a machine with a GPU).")
        return
    recorded_findings = sweep_findings(recorded.sweep)
    _print_recorded(recorded.caption(), sweep_markdown(recorded.sweep), recorded_findings)


COMMANDS = {
    "turnaround": "time one scoring pass three ways, beside a GPU's recording",
    "sweep": "time K weight settings tried one by one and all at once",
    "verify": "run the blocks the book shows (or the ids given) and compare",
}
"""Each command and its one line of help: ``python -m examples --help`` lists them."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """The usage, the word not understood, and the command it was probably meant to be."""
        self.print_usage(sys.stderr)
        hint = ""
        wrong = re.search(r"invalid choice: '([^']*)'", message)
        close = difflib.get_close_matches(wrong[1], COMMANDS, n=1) if wrong else []
        if close:
            hint = f" (did you mean `python -m examples {close[0]}`?)"
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")


def parser() -> argparse.ArgumentParser:
    """The command line, as ``python -m examples --help`` prints it."""
    width = max(len(name) for name in COMMANDS) + 2
    listing = "\n".join(f"  {name:<{width}}{line}" for name, line in COMMANDS.items())
    main_parser = _Parser(
        prog="python -m examples",
        usage="%(prog)s [-h] [--version] [<command> ...]",
        description="With no command: print the practice's 9 output lines, computed live.",
        # One line a command, as written (argparse's own listing wraps the longest name).
        epilog=f"commands:\n{listing}\n\n'%(prog)s <command> --help' tells more.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    main_parser.add_argument(
        "--version",
        action="store_true",
        help="name every section with its version, this version and its site",
    )
    commands = main_parser.add_subparsers(
        dest="command", metavar="<command>", help=argparse.SUPPRESS, parser_class=_Parser
    )
    for name, line in COMMANDS.items():
        command = commands.add_parser(
            name,
            prog=f"python -m examples {name}",
            help=line,
            description=line[0].upper() + line[1:],
        )
        if name == "verify":
            command.add_argument(
                "block_ids", nargs="*", metavar="block-id", help="only the blocks with these ids"
            )
    return main_parser


def main(argv: list[str]) -> int:
    arguments = parser().parse_args(argv)
    if arguments.version:
        print(about())
        return 0
    if arguments.command is None:
        from .practice import practice_lines

        print(about(), file=sys.stderr)  # stdout stays the manuscript's 9 lines
        for line in practice_lines():
            print(line)
        return 0
    name_an_unused_gpu()  # every command times or compares
    if arguments.command == "turnaround":
        turnaround()
    elif arguments.command == "sweep":
        sweep()
    else:
        return verify(arguments.block_ids)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
