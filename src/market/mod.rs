//! The marketplace's pure logic: outcomes, scoring dimensions and the data tables from
//! `scoring/` that give them their numbers. Nothing here performs I/O; the tables are embedded
//! in the binary at build time so every ranking and weight change can be explained from the
//! files in `scoring/` alone.

mod dimension;
mod outcome;
mod tables;

pub use dimension::{Dimension, Scores};
pub use outcome::Outcome;
pub use tables::{tables, AccuracyBonus, DeltaTable, Tables};
