"""The model files Folio knows: the registry of added models and the discovery of models already on disk."""
