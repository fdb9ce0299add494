"""The figures of :mod:`flitsim.plot`, by kind (private: import them from flitsim.plot)."""
