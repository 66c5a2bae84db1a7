"""Storage: the engine and sessions (`engine`), the tables (`models`), the schema's history (`migrations`)."""
