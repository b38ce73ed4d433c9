"""The public releases pragexp reads, fetched and checked: the registry kept in the repository (registry.yaml:
where each release comes from, at which commit, which files with their digests, its licence and whether
training on it is allowed), the data folder they are fetched into (`paths.data_dir`), the download that
resumes, the check of every file, and the `${release:NAME,SUBPATH}` resolver that makes a dataset's
`data.path` default to its fetched copy. CLI: `python -m pragexp.data fetch NAME... | --all | --list`."""
