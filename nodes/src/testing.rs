//! Test support (feature `test-support`): the store's throwaway databases and rows
//! (`store::testing`), and moto for the `ec2` provider's tests.

pub use store::testing::*;

/// moto, for the `ec2` provider's tests.
pub mod moto;
