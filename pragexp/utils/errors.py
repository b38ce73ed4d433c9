"""The one error type for bad input files: its message names the file, the place and the field."""


class DataFormatError(ValueError):
    def __init__(self, path, message: str, *, line: int | None = None, where: str | None = None):
        place = f"{path}" + (f":{line}" if line is not None else "") + (f" ({where})" if where else "")
        super().__init__(f"{place}: {message}")
        self.path, self.line, self.where = path, line, where
