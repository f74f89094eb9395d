//! Python bindings (placeholder until the Python issue lands).
