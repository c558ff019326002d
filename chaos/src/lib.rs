//! Library side of the Rafter chaos harness (see `chaos/README.md`): the checkers (`check`),
//! fault-injecting proxies (`net`), the launcher (`cluster`), recorded traffic (`traffic`),
//! faults (`nemesis`), one seeded run (`run`) and the named regression scenarios
//! (`scenarios`).

pub mod check;
pub mod cluster;
pub mod nemesis;
pub mod net;
pub mod run;
pub mod scenarios;
pub mod traffic;
