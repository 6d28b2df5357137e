"""The tokenisation schemes: one module or package per scheme, each declaring its ``SCHEME = SchemeDescriptor(...)``
(:mod:`preprocess.registry` finds them here by reading the source; a scheme's name is its module's name)."""
