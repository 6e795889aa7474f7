"""The exceptions the cuvil package raises."""


class CuvilError(Exception):
    """cuvilc refused the model or failed (its message says why), or a saved
    model cannot be loaded."""


class ToolNotFoundError(CuvilError):
    """A program cuvil needs (cuvilc, ld.lld) is not installed or not found."""
