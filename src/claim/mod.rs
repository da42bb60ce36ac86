//! Claims an agent makes about its own work, and the rules that judge them against the repository
//! (SPEC §10): the verdict token that begins its report (`token`, for `guard`) and the lifecycle
//! signal that ends its message (`signal`). The commands in `cmd/` only read arguments, call
//! these, record and print.

pub mod close;
pub mod signal;
pub mod token;
