//! Test support (feature `test-support`): the store's throwaway databases and rows, and
//! moto for the `ec2` provider's tests (the `nodes` crate's `testing`).

pub use nodes::testing::*;
