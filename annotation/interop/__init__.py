"""A grading campaign in and out of other annotation tools: Label Studio
(`label_studio.py`) and Argilla 2.x (`argilla.py`). Both read the campaign through
`grades.py` and write people's grades back through `actions.py`, so the two formats
differ only in their shape. Field mappings: docs/IMPORT_FORMATS.md."""
