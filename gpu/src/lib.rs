//! GPU backend for ndjit (placeholder until the GPU issue lands).
