"""probe.Error and one subclass per libprobe error kind (include/probe/error.h)."""


class Error(Exception):
    """A libprobe failure: `file`, `field` and `api` say where (empty when unknown)."""

    def __init__(self, text, message="", file="", field="", api="", exit_code=1):
        super().__init__(text)
        self.message = message or text
        self.file = file
        self.field = field
        self.api = api
        self.exit_code = exit_code


class InvalidArgumentError(Error, ValueError):
    """A bad argument (the CLI's exit code 2)."""


class IoError(Error, OSError):
    """A file cannot be opened, read, mapped or written (exit code 3)."""


class FormatError(Error):
    """A malformed file (exit code 4)."""


class UnsupportedError(Error):
    """Valid input that probe does not handle (exit code 5)."""


class SecurityError(Error):
    """Input that tries to escape the dump directory or run code (exit code 6)."""


class RunnerError(Error):
    """A runner registered by the caller failed (exit code 7)."""


class InternalError(Error):
    """A bug in probe (exit code 70)."""


_BY_KIND = {
    "invalid argument": InvalidArgumentError,
    "I/O error": IoError,
    "format error": FormatError,
    "unsupported": UnsupportedError,
    "security error": SecurityError,
    "runner error": RunnerError,
    "internal error": InternalError,
}


def class_for(kind):
    return _BY_KIND.get(kind, Error)
