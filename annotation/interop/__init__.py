"""A grading campaign in and out of other annotation tools: Label Studio
(`label_studio.py`) and Argilla 2.x (`argilla.py`). Both read the campaign through
`grades.py` and write people's grades back through `actions.py`, so the two formats
differ only in their shape; `annotators.py` names who graded as each tool does.
Field mappings: docs/IMPORT_FORMATS.md; what each tool keeps: docs/INTEROP.md."""
