//! C ABI for ndjit (placeholder until the C ABI issue lands).
