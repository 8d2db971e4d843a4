"""Model files: the store that resolves model names, its disk cache, CTranslate2 conversion."""
