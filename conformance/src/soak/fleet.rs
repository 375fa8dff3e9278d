//! One cluster shared by every session of a load run (`cluster-load`): which replicas are up and
//! where they listen ([`Fleet`]), where each new connection goes, and the killer that SIGKILLs one
//! replica every few seconds and starts it again ([`kill_loop`]).
//!
//! A connection remembers the replica it went to and that replica's generation, which the killer
//! moves on *before* it sends SIGKILL: a connection that ends after that on a replica whose
//! generation moved on was cut by the kill, not ended by the server, and its session resumes on
//! another replica ([`Fleet::lost_to_kill`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use crate::backend::Cluster;

/// Where a connection went: the replica and its generation at the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placed {
    /// The replica's index.
    pub replica: usize,
    /// Its generation when the connection was placed.
    pub generation: u64,
}

#[derive(Clone, Debug)]
struct ReplicaView {
    url: String,
    up: bool,
    generation: u64,
}

#[derive(Debug, Default)]
struct FleetState {
    replicas: Vec<ReplicaView>,
    kills: u64,
    last_kill: Option<Instant>,
}

/// What the sessions of a load run see of the shared cluster.
#[derive(Debug)]
pub(crate) struct Fleet {
    state: Mutex<FleetState>,
    next: AtomicUsize,
    /// How long after a kill a wait may take longer: the recovery bound plus a margin.
    recovery_allowance: Duration,
}

impl Fleet {
    /// The replicas listening at `urls`, all up; a wait may run `recovery_allowance` past a kill.
    pub fn new(urls: Vec<String>, recovery_allowance: Duration) -> Fleet {
        let replicas = urls.into_iter().map(|url| ReplicaView { url, up: true, generation: 0 }).collect();
        Fleet {
            state: Mutex::new(FleetState { replicas, ..FleetState::default() }),
            next: AtomicUsize::new(0),
            recovery_allowance,
        }
    }

    fn lock(&self) -> MutexGuard<'_, FleetState> {
        // Nothing holding the lock panics; a poisoned lock still holds consistent data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many replicas there are.
    pub fn len(&self) -> usize {
        self.lock().replicas.len()
    }

    /// The replica a connection goes to and its URL: a new connection (`after` `None`) takes the
    /// next replica in turn; a reconnect takes the first replica after `after` (the one it was
    /// on); replicas that are down are passed over. `None` when none is up.
    pub fn place(&self, after: Option<usize>) -> Option<(String, Placed)> {
        let state = self.lock();
        let n = state.replicas.len();
        if n == 0 {
            return None;
        }
        let start = match after {
            Some(k) => k + 1,
            None => self.next.fetch_add(1, Ordering::Relaxed),
        };
        (0..n).map(|i| (start + i) % n).find_map(|k| {
            let r = &state.replicas[k];
            r.up.then(|| (r.url.clone(), Placed { replica: k, generation: r.generation }))
        })
    }

    /// Whether the replica of `placed` was killed since the connection was placed on it.
    pub fn lost_to_kill(&self, placed: Placed) -> bool {
        let state = self.lock();
        state.replicas.get(placed.replica).is_some_and(|r| !r.up || r.generation != placed.generation)
    }

    /// Kills so far.
    pub fn kills(&self) -> u64 {
        self.lock().kills
    }

    /// Until when a wait may go on because of the latest kill (its recovery bound plus margin).
    pub fn recovery_deadline(&self) -> Option<Instant> {
        self.lock().last_kill.map(|at| at + self.recovery_allowance)
    }

    /// Replica `k` is about to be killed: it is down, and connections placed on it before are lost.
    fn going_down(&self, k: usize) {
        let mut state = self.lock();
        if let Some(r) = state.replicas.get_mut(k) {
            r.up = false;
            r.generation += 1;
        }
        state.kills += 1;
        state.last_kill = Some(Instant::now());
    }

    /// Replica `k` is up again, listening at `url`.
    fn back_up(&self, k: usize, url: &str) {
        if let Some(r) = self.lock().replicas.get_mut(k) {
            r.up = true;
            r.url = url.to_owned();
        }
    }
}

/// When and how the killer kills.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KillPlan {
    /// A kill every this long (the first one this long after the start).
    pub every: Duration,
    /// How long a killed replica stays down before it is started again.
    pub down: Duration,
    /// No kill at or after this instant.
    pub end: Instant,
}

/// What the killer did.
#[derive(Debug, Default)]
pub(crate) struct KillLog {
    /// Replicas killed.
    pub kills: u64,
    /// Replicas that did not come back (harness errors).
    pub errors: Vec<String>,
}

/// How often a replica that failed to start is tried again, and how many times.
const START_RETRY: Duration = Duration::from_secs(1);
const START_TRIES: usize = 3;

/// Kills one replica after another (in turn: r0, r1, …) every `plan.every` until `plan.end` or
/// `stop`, each down for `plan.down`, then started again (same name, same store). Returns the
/// cluster, every replica started again, and what was done.
pub(crate) async fn kill_loop(
    mut cluster: Cluster,
    fleet: Arc<Fleet>,
    plan: KillPlan,
    stop: Arc<AtomicBool>,
) -> (Cluster, KillLog) {
    let mut log = KillLog::default();
    let n = cluster.len();
    if n == 0 || plan.every.is_zero() {
        return (cluster, log);
    }
    let mut next = Instant::now() + plan.every;
    let mut k = 0usize;
    while next < plan.end && !stop.load(Ordering::Relaxed) {
        // Sleep in short steps so a stop is seen promptly.
        let now = Instant::now();
        if now < next {
            tokio::time::sleep_until(next.min(now + Duration::from_millis(200))).await;
            continue;
        }
        let replica = k % n;
        k += 1;
        fleet.going_down(replica);
        if let Err(e) = cluster.kill_replica(replica).await {
            log.errors.push(format!("cannot kill replica r{replica}: {e}"));
            continue;
        }
        log.kills += 1;
        tokio::time::sleep(plan.down).await;
        match start(&mut cluster, replica).await {
            Ok(()) => fleet.back_up(replica, cluster.url(replica).unwrap_or_default()),
            Err(e) => log.errors.push(e),
        }
        next = (next + plan.every).max(Instant::now());
    }
    (cluster, log)
}

/// Starts replica `k` again, trying a few times.
async fn start(cluster: &mut Cluster, k: usize) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..START_TRIES {
        match cluster.start_replica(k).await {
            Ok(()) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(START_RETRY).await;
    }
    Err(format!("replica r{k} did not come back after kill -9: {last}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet(n: usize) -> Fleet {
        Fleet::new((0..n).map(|k| format!("ws://r{k}")).collect(), Duration::from_secs(10))
    }

    #[test]
    fn new_connections_take_the_replicas_in_turn_and_reconnects_move_on() {
        let f = fleet(3);
        let picks: Vec<usize> = (0..4).map(|_| f.place(None).unwrap().1.replica).collect();
        assert_eq!(picks, vec![0, 1, 2, 0]);
        assert_eq!(f.place(Some(0)).unwrap().1.replica, 1);
        assert_eq!(f.place(Some(2)).unwrap().1.replica, 0);
        assert_eq!(f.place(Some(2)).unwrap().0, "ws://r0");
    }

    #[test]
    fn a_killed_replica_is_passed_over_and_its_connections_are_lost() {
        let f = fleet(3);
        let (_, on_r1) = f.place(Some(0)).unwrap();
        assert_eq!(on_r1.replica, 1);
        assert!(!f.lost_to_kill(on_r1));
        assert_eq!(f.recovery_deadline(), None);
        f.going_down(1);
        assert!(f.lost_to_kill(on_r1));
        assert_eq!(f.kills(), 1);
        assert!(f.recovery_deadline().is_some());
        assert_eq!(f.place(Some(0)).unwrap().1.replica, 2, "r1 is down: the next one");
        f.back_up(1, "ws://r1-again");
        assert!(f.lost_to_kill(on_r1), "a connection of before the kill stays lost");
        let (url, again) = f.place(Some(0)).unwrap();
        assert_eq!((url.as_str(), again.generation), ("ws://r1-again", 1));
        assert!(!f.lost_to_kill(again));
        for k in 0..3 {
            f.going_down(k);
        }
        assert_eq!(f.place(None), None, "none up");
        assert_eq!(fleet(0).place(None), None);
    }

    #[test]
    fn after_a_kill_a_wait_may_last_the_recovery_allowance_but_never_past_the_session() {
        use super::super::backend::Backend;
        let f = Arc::new(fleet(3));
        let backend = Backend::Shared(f.clone());
        let now = Instant::now();
        let (soon, cap) = (now + Duration::from_secs(1), now + Duration::from_secs(60));
        assert_eq!(backend.extended(soon, cap), soon, "no kill yet");
        let (_, placed) = backend.place(None).unwrap();
        assert!(placed.is_some() && !backend.lost_to_kill(placed));
        f.going_down(placed.unwrap().replica);
        assert!(backend.lost_to_kill(placed));
        let later = backend.extended(soon, cap);
        assert!(
            later >= now + Duration::from_secs(10) && later <= Instant::now() + Duration::from_secs(10),
            "{later:?}"
        );
        let near = now + Duration::from_secs(2);
        assert_eq!(backend.extended(soon, near), near, "capped by the session's deadline");
        assert!(backend.kills_known() && backend.kills() == 1 && !backend.can_restart());
        let url = Backend::Url("ws://x".into());
        assert!(!url.kills_known() && !url.lost_to_kill(placed) && url.extended(soon, cap) == soon);
    }
}
