# An API key is imported by its id; the imported key has no secret (key is null).
terraform import jobbie_api_key.ci key_01j8z3w5t0q9xh3m2c4v6b8n0p
