"""Models: OPT, the project's static-structure FixedOPT, the seed idioms and their fixes, the
catalog of named models (and later any Hugging Face type). The top of the data path."""
