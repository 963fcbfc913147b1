"""Stand-in for Agent Zero's helpers/print_style.py: lines also kept for the tests."""

lines: list = []


class PrintStyle:
    @staticmethod
    def info(*args, sep=" ", end="\n", flush=True):
        lines.append(("info", sep.join(str(a) for a in args)))

    @staticmethod
    def error(*args, sep=" ", end="\n", flush=True):
        lines.append(("error", sep.join(str(a) for a in args)))
