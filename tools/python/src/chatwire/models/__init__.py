"""Pydantic v2 models generated from schema/json by tools/python/scripts/generate.py. Do not edit."""
