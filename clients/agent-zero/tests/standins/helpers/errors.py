"""Stand-in for Agent Zero's helpers/errors.py (the exceptions the loop knows)."""


class RepairableException(Exception):
    pass


class InterventionException(Exception):
    pass


class HandledException(Exception):
    pass
