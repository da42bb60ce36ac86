//! clap's reading of the domain's enums that flags take (`--target`, `--scope`, `--mode`, `--strategy`, `--format`):
//! written here, so the domain modules never name clap (the layer fence, tests/it/layers.rs).
//! The names are the domain's own `as_str`, in declaration order.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::agent::Target;
use crate::agent::install::Scope;
use crate::agent::session::Mode;
use crate::land::compose::Strategy;
use crate::render::Format;

impl ValueEnum for Target {
    fn value_variants<'a>() -> &'a [Self] {
        &Target::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

impl ValueEnum for Scope {
    fn value_variants<'a>() -> &'a [Self] {
        &[Scope::Project, Scope::Local, Scope::User]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()).help(self.help()))
    }
}

impl ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        &[Mode::Claims, Mode::Always]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()).help(self.help()))
    }
}

impl ValueEnum for Strategy {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Strategy::Merge,
            Strategy::Squash,
            Strategy::Rebase,
            Strategy::Ff,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &[Format::Human, Format::Json, Format::Github, Format::Sarif]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}
