//! The append-only record: `<git common dir>/closegate/audit.jsonl` and archived documents (SPEC §6).
