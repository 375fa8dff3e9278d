//! The seams of one server: each group of faults behind the seam it bends, the identity for a
//! correct server.

use super::cluster::ClusterFaults;
use super::commit::CommitFaults;
use super::decide::DecisionFaults;
use super::fanout::FanoutFaults;
use super::hello::HelloFaults;
use super::list::{Fault, NoFault};
use super::resume::ResumeFaults;
use super::timers::TimerFaults;
use super::window::WindowFaults;
use super::wire::WireFaults;

/// The faults of one server, one per seam.
#[derive(Debug)]
pub(crate) struct Faults {
    pub wire: Box<dyn WireFaults>,
    pub hello: Box<dyn HelloFaults>,
    pub resume: Box<dyn ResumeFaults>,
    pub decide: Box<dyn DecisionFaults>,
    pub commit: Box<dyn CommitFaults>,
    pub fanout: Box<dyn FanoutFaults>,
    pub window: Box<dyn WindowFaults>,
    pub timers: Box<dyn TimerFaults>,
    pub cluster: Box<dyn ClusterFaults>,
}

impl Faults {
    /// The seams of a server with `fault` planted, or of the correct server.
    pub fn of(fault: Option<Fault>) -> Faults {
        match fault {
            Some(f) => Faults {
                wire: Box::new(f),
                hello: Box::new(f),
                resume: Box::new(f),
                decide: Box::new(f),
                commit: Box::new(f),
                fanout: Box::new(f),
                window: Box::new(f),
                timers: Box::new(f),
                cluster: Box::new(f),
            },
            None => Faults {
                wire: Box::new(NoFault),
                hello: Box::new(NoFault),
                resume: Box::new(NoFault),
                decide: Box::new(NoFault),
                commit: Box::new(NoFault),
                fanout: Box::new(NoFault),
                window: Box::new(NoFault),
                timers: Box::new(NoFault),
                cluster: Box::new(NoFault),
            },
        }
    }
}
