"""Readers of file formats that several datasets share: JSON lines, CSV as text, text-pair files (TSV, JSON
lines, a hub dataset's rows). Each error names the file, the line and the field."""
