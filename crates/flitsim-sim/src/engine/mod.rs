//! The flit-level engine: [`Network::build`] allocates every buffer and table once, then
//! [`Network::run`] simulates cycle by cycle.
//!
//! # Model (one cycle = one flit on a width-1 link)
//!
//! * **Ports** are numbered globally ([`PortIdx`]): switch ports first
//!   (`Topology::port_index`), then one port per endpoint. Each port has an output side (the
//!   link it drives, with the sender's view of the receiver's buffer) and an input side (the
//!   receiver's VL buffers).
//! * **Links** ([`link`]) are delay lines: a flit sent in cycle `t` over a link of latency `L`
//!   is in the receiver's buffer at the start of cycle `t + L`; the credit for a flit that
//!   leaves a buffer in cycle `t` is back at the sender at `t + L`. Every effect between
//!   components has latency ≥ 1, so each cycle is evaluate-then-commit and the order in which
//!   components are visited never changes a result.
//! * **Switches** ([`switch`]) have an [`route::Organisation`], chosen once:
//!   an *input-queued* crossbar, a *combined input/output-queued* crossbar (the crossbar
//!   moves packets into per-port output buffers at `speedup` flits per cycle and each output
//!   port's scheduler feeds its link from them), or the *hierarchical Omni-Path switch*
//!   ([`opa`]), simulated as MPort and central crossbars of the same kind. A head flit
//!   arriving in cycle `t` (or becoming the head of its VL in cycle `t`) may request its
//!   output from cycle `t + routing_delay`; its output port and VL come from the switch's
//!   route source and SL→VL table ([`route`]). A separable allocator ([`allocator`]) runs
//!   every cycle in which something changed: each input port's round-robin arbiter picks one
//!   VL whose head can start (output free, and, for virtual cut-through, room for the whole
//!   packet in the next buffer; for wormhole, one credit and the output VL not held by
//!   another packet); each output port's scheduler then picks a VL among its requests and a
//!   round-robin arbiter picks the input. The granted packet holds its input VL and the output
//!   port until its tail has passed (packets never interleave on a link, as in InfiniBand);
//!   its first flit crosses in the cycle of the grant. A connection moves up to `width` flits
//!   per cycle of the flits already present (cut-through), so an uncontended hop costs
//!   `routing_delay + link latency` cycles.
//! * **Buffers** ([`buffer`]) are static per VL or dynamically shared with a reserved minimum
//!   and a maximum per VL; every credit check goes through one [`buffer::VlAccount`]
//!   type. The packets of a VL wait in a [`queue::VlQueue`] whose discipline says
//!   which may move next (FIFO today).
//! * **Endpoints** ([`nic`]) generate messages into an unbounded application queue per class,
//!   segment them into packets of at most the class MTU when they fit into the bounded NIC
//!   buffer, and inject through an output scheduler under the same credit rules; they
//!   consume flits at link rate (with `nic.receive_time`, a packet waits in the NIC's receive
//!   buffer, under credits, until the NIC's processor takes it: see [`rate`]).
//!
//! The latency of a lone packet of `P` flits crossing `k` switches over links of latency `L`
//! with routing delay `R`, measured from generation to tail delivery, is therefore
//! `(k + 1)·L + k·R + P − 1` cycles (see the `closed_form` tests).
//!
//! Flow control is checked by [`Network::check_invariants`] ([`invariants`]); a fabric in which
//! no flit moves for `run.stall_cycles` while flits are buffered stops with a deadlock report.
//!
//! A cycle visits only the switches of each lane's active set (`lane::LaneOwn::sw_active`): a
//! switch leaves it when it finds itself idle with no wake-up time, and rejoins it when a
//! credit makes it dirty or a head gives it a wake-up time; the NICs likewise (those with
//! flits to send). A switch whose connections all stream (trains) and that has nothing else
//! to do leaves it too, with a wake-up event on its lane's wheel for the cycle the first of
//! them steps again (`Lane::sleep`). A switch whose last allocation left no ready head
//! waiting is *settled* (`switch::SwitchState::settled`): until its next head is ready, the
//! allocations a closing connection or a credit would ask for find nothing, and are skipped.
//! The look-ahead of large fabrics asks for the lines of the next switches of the active set,
//! not of the next by index; on the largest it is a pipeline whose stages (the switch's
//! state, its ports' crossbar records, its queues, its heads' output facts) each read what
//! the one two visits earlier asked for (`LOOK` and the constants beside it); with output
//! buffers it also asks for the output-buffer queues its connections' steps will write. When
//! the whole fabric is idle the run skips to the next message.
//!
//! # Trains (how the engine avoids one event per flit)
//!
//! Under virtual cut-through, a packet that leaves a buffer one flit per cycle from its head
//! on — a NIC's packet, or a switch's whose flits are all present or arrive one per cycle —
//! keeps that pace to its tail: its room downstream was reserved whole, and its flits arrive
//! no later than they leave. The engine uses this where nothing else can interleave with it
//! (no output buffers, one connection per output port, no deadline-based QoS, width-1 links):
//!
//! * the receiver gets one link event, for the head ([`link::F_TRAIN`]); its queue counts the
//!   whole packet and tells from the head's arrival cycle which flits are in
//!   ([`queue::RX_TRAIN`]);
//! * the sender gets its credits as one event, taken off its account as the cycles pass
//!   (`buffer::Train`), and a switch blocked on credits wakes in the cycle its head's room is
//!   back (not with shared buffer pools, or a DTable keeping MTUs together: credits return one
//!   by one there);
//! * the sending connection counts the flits between head and tail when the head leaves and
//!   steps again only for the tail ([`queue::STREAM`]);
//! * a sending NIC likewise: after the head its lane does not visit it until the tail's
//!   cycle (or the cycle its refill may try again, `Nic::skip`); the flits between leave its
//!   buffer's counts when it is visited or its buffer is read (`Nic::settle`), its wake-ups
//!   wait in a per-lane ring of cycles (`nic::NicWakes`; not with the port time series, which
//!   logs each flit's cycle);
//! * towards an endpoint the tail is an event too (it completes the packet there): the NIC
//!   notes the head's cycle and, when the tail arrives, counts the flits between as delivered
//!   one per cycle (not with `nic.receive_time`, whose receive processor takes flits one by
//!   one, nor inside atomic DTable messages, whose packets end flit by flit).
//!
//! Readers outside the hot loop (invariants, occupancy samples, the deadlock report, the
//! flits left at the end) count what is on the link or not yet sent from the same cycles.
//! Results are those of one event per flit and per credit ([`Network::flit_by_flit`], checked
//! by a proptest), only faster.
use crate::config::{SimParams, Switching};
use crate::ids::{Cycle, PacketId, PortIdx, Vl, NEVER};
use crate::scheduler::{OutputScheduler, RoundRobinArbiter};
use crate::stats::collector::{Collector, RunEnd};
use crate::stats::{
    DeadlockReport, Delivery, PortResult, PortSeries, RouteHop, RunResult, SwitchSeries,
};
use crate::traffic::Pattern;
use crate::SimError;
use flitsim_manager::FabricConfig;
use flitsim_topology::PortNum;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub mod allocator;
pub mod buffer;
pub(crate) mod build;
pub(crate) mod calendar;
pub mod deadline;
pub mod invariants;
pub mod lane;
pub mod link;
pub mod nic;
pub mod opa;
pub mod packet;
pub mod queue;
pub mod rate;
pub mod route;
pub mod switch;

use buffer::{BufferOrg, VlAccount};
use link::{Event, TimeWheel, F_TAIL};
use nic::{Nic, Scripted, Source};
use packet::{MessageSlab, PacketSlab, MSG_NONE, NO_FLOW, NO_TRACE};
use queue::VlQueue;
use route::{Organisation, RouteSource};
use switch::SwitchState;

/// Where a crossbar connection to an output port delivers its flits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Egress {
    /// Straight onto the port's link.
    Link,
    /// Into the port's output buffer, which feeds the link.
    OutputBuffer,
}

/// Static facts about one port of the engine.
///
/// 16 bytes, aligned: the hot loop reads a port's facts for every flit it moves, and a
/// record that straddled two cache lines (a quarter of them did at 20 bytes) cost two misses.
#[derive(Clone, Copy, Debug)]
#[repr(align(16))]
pub(crate) struct PortInfo {
    /// The port at the other end of the link ([`PortIdx::NONE`] if unconnected).
    pub peer: PortIdx,
    pub latency: u32,
    /// Cycles from a head's arrival in this input buffer to its first allocation attempt
    /// (`switch.routing_delay`; `switch.opa.internal_routing_delay` inside an Omni-Path
    /// switch).
    pub delay: u32,
    pub width: u16,
    /// Organisation of this port's input buffer (index into `Network::in_orgs`).
    pub in_org: u8,
    /// [`PortInfo::TO_ENDPOINT`], [`PortInfo::TO_SWITCH`], [`PortInfo::HOP`] and
    /// [`PortInfo::OUTPUT_BUFFER`].
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<PortInfo>() == 16);

impl PortInfo {
    const TO_ENDPOINT: u8 = 1;
    const TO_SWITCH: u8 = 2;
    const HOP: u8 = 4;
    const OUTPUT_BUFFER: u8 = 8;

    /// An unconnected port with a width-1, latency-1 link onto which the crossbar delivers.
    pub fn new(in_org: u8, delay: u32) -> Self {
        PortInfo {
            peer: PortIdx::NONE,
            latency: 1,
            delay,
            width: 1,
            in_org,
            flags: 0,
        }
    }
    #[inline(always)]
    fn flag(self, f: u8) -> bool {
        self.flags & f != 0
    }
    fn set_flag(&mut self, f: u8, on: bool) {
        if on {
            self.flags |= f;
        } else {
            self.flags &= !f;
        }
    }
    /// The peer is an endpoint: it sinks at link rate, no credits needed.
    #[inline(always)]
    pub fn to_endpoint(self) -> bool {
        self.flag(Self::TO_ENDPOINT)
    }
    pub fn set_to_endpoint(&mut self, on: bool) {
        self.set_flag(Self::TO_ENDPOINT, on);
    }
    /// The peer is a switch of the fabric (the link counts in flit-hops).
    #[inline(always)]
    pub fn to_switch(self) -> bool {
        self.flag(Self::TO_SWITCH)
    }
    pub fn set_to_switch(&mut self, on: bool) {
        self.set_flag(Self::TO_SWITCH, on);
    }
    /// A packet entering this input counts a switch hop (an external input of a fabric
    /// switch; not the internal ports of a hierarchical Omni-Path switch).
    #[inline(always)]
    pub fn hop(self) -> bool {
        self.flag(Self::HOP)
    }
    pub fn set_hop(&mut self, on: bool) {
        self.set_flag(Self::HOP, on);
    }
    /// Where a crossbar connection to this output delivers its flits.
    #[inline(always)]
    pub fn egress(self) -> Egress {
        if self.flag(Self::OUTPUT_BUFFER) {
            Egress::OutputBuffer
        } else {
            Egress::Link
        }
    }
    pub fn set_egress(&mut self, e: Egress) {
        self.set_flag(Self::OUTPUT_BUFFER, e == Egress::OutputBuffer);
    }
}

/// The output buffers of all ports (combined input/output-queued and Omni-Path switches;
/// every vector is empty in a fabric without output buffers).
#[derive(Default)]
pub(crate) struct OutputBuffers {
    /// Per (port, VL).
    pub queues: Vec<VlQueue>,
    pub account: VlAccount,
    /// Per port, the VLs with packets, and the VL whose packet is on the link.
    pub waiting: Vec<u32>,
    pub cur: Vec<Vl>,
    /// No head could start at the last try; nothing to do until credits arrive or a new
    /// packet enters.
    pub stalled: Vec<bool>,
    /// Round robin among VLs at the crossbar stage.
    pub xsched: Vec<OutputScheduler>,
}

/// What allocation reads and writes of one port, input and output side, in one record: a
/// head's allocation touches its input's and its output's record, one line each, where
/// five vectors (one per field) cost a line each on a fabric larger than the cache.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
pub(crate) struct XbarPort {
    /// Input side: the VLs whose head packet waits for the crossbar (bit v = VL v).
    pub waiting: u32,
    /// Output side: the crossbar outputs in use: every bit when a multiplexed crossbar
    /// connection holds the port, bit v for VL v with `switch.crossbar = "per_vl"`.
    pub out_busy: u32,
    /// Input side: the round robin among its VLs.
    pub rr_in: RoundRobinArbiter,
    /// Output side: the round robin among the switch's inputs.
    pub rr_out: RoundRobinArbiter,
    /// Input side: the crossbar connections it holds.
    pub in_conns: u8,
}

const _: () = assert!(std::mem::size_of::<XbarPort>() == 16);

/// A built fabric ready to simulate.
pub struct Network {
    cfg: SimParams,
    topo_name: String,
    routing_name: String,
    vls: usize,
    switching: Switching,
    n_endpoints: usize,
    /// Index of the first NIC port.
    nic_base: u32,
    ports: Vec<PortInfo>,
    /// Per port, the simulated switch and its port number.
    port_names: Vec<(u32, PortNum)>,
    switch_names: Vec<String>,
    /// Per port, the (name index into `display_names`, port number) shown in results: the
    /// fabric's switch and port for external ports, the internal node's otherwise.
    display: Vec<(u32, PortNum)>,
    display_names: Vec<String>,
    organisation: Organisation,
    routes: RouteSource,
    fabric: FabricConfig,
    /// The switches' SL→VL tables, deduplicated for the hot loop.
    sl2vl: route::Sl2VlTables,
    wheel: TimeWheel,
    // Output side of every port.
    /// The sender's view of the receiver's input buffer.
    credits: VlAccount,
    /// Per (port, VL), the packet holding the VL under wormhole switching.
    vl_owner: Vec<PacketId>,
    sched: Vec<OutputScheduler>,
    // Input side of every port.
    /// Per (port, VL).
    inputs: Vec<VlQueue>,
    in_orgs: Vec<BufferOrg>,
    /// Per port, its crossbar state, input and output side in one record.
    xbar: Vec<XbarPort>,
    obuf: OutputBuffers,
    switches: Vec<SwitchState>,
    /// The lanes of the switch phase (contiguous ranges of switches; each on its own thread
    /// when there are several).
    lanes: Vec<lane::LaneOwn>,
    /// Scratch space of the switch phase: where it cuts the lanes (see `switch_phase`).
    phase_cuts: lane::PhaseCuts,
    /// Switch phases since the lanes were last balanced (see `Network::balance_lanes`).
    balance_phases: u32,
    /// Switch phases from one balancing of the lanes to the next (see `balance_lanes`).
    balance_every: u32,
    /// Per switch, its share of a lane's work as the lanes' cuts assume it (`lane_weights`).
    lane_weight: Vec<f64>,
    // Endpoints and traffic.
    nics: Vec<Nic>,
    /// The NICs with something to do before the switch phase (bit per endpoint: see
    /// [`Network::update_pending`]).
    nic_pending: Vec<u64>,
    /// `nic.receive_time` > 0: flits reaching a NIC wait for its processor (in `Nic::rx`),
    /// and the switch ports to NICs count credits for the NIC's receive buffer.
    nic_receive: bool,
    /// Packets reach endpoints as trains too (`trains`, no `nic_receive`, no packets inside
    /// atomic DTable messages, whose tails are timed flit by flit): the switch sends the
    /// head and the tail as events and the flits between without, one per cycle.
    eject_trains: bool,
    /// Per endpoint, the train it is receiving (`eject_trains`): the packet and the cycle its
    /// head arrived, or [`PacketId::NONE`].
    rx_train: Vec<(PacketId, Cycle)>,
    nic_buf: VlAccount,
    nic_sl2vl: Vec<u8>,
    mtu: Vec<u16>,
    /// Per class, the unit the NIC cuts a message into: a packet (`traffic.packet_flits`,
    /// at most the MTU), or a whole MTU message when DTable sends messages atomically.
    unit: Vec<u16>,
    /// Packet size inside an atomic DTable message, flits (0: every unit is one packet).
    sub_packet: u16,
    sources: Vec<Source>,
    /// Which source generates next (each source's next message, by cycle and id).
    gen_calendar: calendar::Calendar,
    scripted: BinaryHeap<Reverse<Scripted>>,
    pattern: Pattern,
    packets: PacketSlab,
    /// Measured messages and trace transfers in flight.
    messages: MessageSlab,
    /// With rate control, each flow's index among its source NIC's rate-controlled flows.
    flow_local: Vec<u32>,
    /// IDT changes to apply, (cycle, flow, IDT) in time order, and the next one's index.
    idt_schedule: Vec<(Cycle, u32, f64)>,
    idt_next: usize,
    /// The trace being replayed, and the transfers it released that wait to be queued.
    replay: Option<Box<crate::replay::Replay>>,
    replay_pending: Vec<crate::replay::state::Injection>,
    // Progress.
    /// Flits in switch buffers.
    buffered_total: u64,
    measured_outstanding: u64,
    last_progress: Cycle,
    counters: Collector,
    build_seconds: f64,
    /// Check the invariants every this many cycles (0: never).
    check_every: u64,
    /// A random visiting order (testing), or the index order.
    shuffle: Option<VisitOrder>,
    /// Deadline-based QoS (`qos.architecture`, `[[qos.class]]`, …), if configured.
    dl: Option<Box<deadline::DeadlineState>>,
    /// Input ports offer their VLs in priority order (lowest first) instead of round robin:
    /// the VCs of `qos.architecture` are numbered in priority order.
    prio_inputs: bool,
    /// The management VL (`traffic.class[…].management`): offered first by every input and
    /// chosen first by every output scheduler.
    mgmt_vl: Option<u8>,
    /// Application queues per class at every NIC: 1, or the VLs with `nic.send_queues = "vl"`.
    app_lanes: usize,
    /// `switch.arbiter = "fifo"`: requests are served oldest first.
    fifo_arbiter: bool,
    /// `switch.crossbar = "per_vl"`: one crossbar input and output per port and VL.
    per_vl_crossbar: bool,
    /// The input queues outgrow the cache: the switch phase prefetches.
    prefetch_queues: bool,
    /// `prefetch_queues` and no output buffers: the switch phase also asks, a switch or two
    /// ahead, for the waiting heads' queues and the credit counts and output schedulers
    /// they will check (see `Lane::prefetch_ahead`; where output buffers are, the
    /// hierarchical switches' many waiting heads made the look-ahead cost more than it saved).
    look_ahead: bool,
    /// `look_ahead` and input queues over [`LOOK_FURTHER_ABOVE`]: the switch phase also asks,
    /// three switches ahead, for the lines of the switch's per-port state, and the NICs'
    /// phase for the record of the next NIC with flits to send.
    look_further: bool,
    /// Packets may cross links as trains (`queue::RX_TRAIN`): a packet that leaves at one
    /// flit per cycle from its head on sends one link event for its head only. Only where
    /// nothing can hold back a started packet or interleave it: virtual cut-through, one
    /// crossbar connection per output port, no output buffers, no deadline-based QoS (whose
    /// clocks are read per flit).
    trains: bool,
    /// Credits may return as trains (see `buffer::Train`): `trains`, no shared buffers and no
    /// DTable keeping MTUs together (whose heads need more room than their own).
    credit_trains: bool,
    /// The last cycle a credit train returns a credit (no idle time may be skipped before:
    /// those credits would have been link events).
    credits_until: Cycle,
    /// The last cycle a streaming packet sends a flit between its head and tail (flits that
    /// move count as progress: see [`Network::progress_before`]).
    streams_until: Cycle,
    /// A DTable keeps MTUs together over packets: a head that would begin an MTU needs room
    /// for all of it ([`crate::scheduler::OutputScheduler::room_needed`]); without one every
    /// head needs room for itself, and the ports' schedulers are not asked.
    mtu_room: bool,
    /// CPU seconds of the last run loop (`performance.cpu_seconds`).
    cpu_seconds: Option<f64>,
}

/// The switch phase asks for the input queues of the connections of the switch
/// this many places ahead, at most this many connections, when the input queues take more
/// than `PREFETCH_ABOVE` bytes. Measured on the 2-core machine of `docs/performance.md`:
/// +8 % flit-hops/s on a 64×64 torus (10 MiB of queues), −5 % on 16×16 and 32×32 (0.7 and
/// 2.6 MiB), where the queues stay in cache and the requests only cost instructions.
const PREFETCH_AHEAD: usize = 2;
/// On the largest fabrics (`Network::look_further`) the look-ahead is a pipeline whose every
/// stage reads what an earlier one asked for: the switch's state [`LOOK`] + 1 places ahead
/// (asked for), its ports' crossbar records [`XBAR_AHEAD`] ahead (read from the state), the
/// waiting heads' and the connections' input queues [`FURTHER_QUEUE_AHEAD`] ahead (read from
/// the records), and the heads' output facts [`HEADS_AHEAD`] ahead (read from the queues).
/// A stage one visit after the one it reads from found its line still on its way (session
/// 30: 28 % of the switch phase of a 256×256 torus on the state's line alone).
const FURTHER_QUEUE_AHEAD: usize = 3;
const XBAR_AHEAD: usize = 4;
const HEADS_AHEAD: usize = 1;
/// How many switches ahead of the one it visits the switch phase knows.
const LOOK: usize = 4;
const PREFETCH_CONNS: usize = 4;
/// How many pending NICs ahead the loop's preparation of the NICs asks for a NIC's record and
/// buffer counts (on large fabrics).
const NIC_PREPARE_AHEAD: usize = 4;
const PREFETCH_ABOVE: usize = 8 << 20;
/// Input queues above which the switch phase looks further ahead (`Network::look_further`).
/// Measured on the same machine (32 MiB of last-level cache): 13–15 % faster per flit-hop on
/// the 256×256 torus and 16-ary 4-tree (192 and over 250 MiB of queues), 4–6 % slower on
/// the 64×64 torus (12 MiB), whose per-port state stays in the cache.
const LOOK_FURTHER_ABOVE: usize = 16 << 20;

/// CPU seconds the calling thread has used (the thread CPU clock), or with `process` the
/// whole process, where the platform has such a clock.
fn cpu_seconds(process: bool) -> Option<f64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
        let clock = if process {
            libc::CLOCK_PROCESS_CPUTIME_ID
        } else {
            libc::CLOCK_THREAD_CPUTIME_ID
        };
        let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
        (rc == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
    }
    #[cfg(not(unix))]
    {
        let _ = process;
        None
    }
}

/// Asks the processor to bring `r`'s cache line in (a hint: no effect on results).
#[inline(always)]
fn prefetch<T>(r: &T) {
    prefetch_ptr(r as *const T);
}

/// [`prefetch`] of every cache line of `r` (a record larger than one line).
#[inline(always)]
fn prefetch_all<T>(r: &T) {
    let p = r as *const T as *const u8;
    for off in (0..std::mem::size_of::<T>()).step_by(64) {
        prefetch_ptr(p.wrapping_add(off));
    }
}

/// [`prefetch`] of a raw pointer (no reference is made, so another thread may own the
/// memory meanwhile).
#[inline(always)]
fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads no memory architecturally and cannot fault, whatever the
    // address.
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A visiting order of NICs and switches, shuffled every cycle.
pub(crate) struct VisitOrder {
    pub nics: Vec<u32>,
    pub switches: Vec<u32>,
    rng: crate::traffic::ComponentRng,
}

impl VisitOrder {
    fn shuffle(&mut self) {
        use rand::seq::SliceRandom;
        self.nics.shuffle(&mut self.rng);
        self.switches.shuffle(&mut self.rng);
    }
}

impl Network {
    /// Schedules one message of `flits` flits from `src` to `dst` in `class` at cycle `at`, in
    /// addition to the configured sources (scripted traffic: tests, trace replay).
    pub fn inject_message(
        &mut self,
        at: u64,
        src: u32,
        dst: u32,
        class: u8,
        flits: u32,
    ) -> Result<(), SimError> {
        let n = self.n_endpoints as u32;
        if src >= n || dst >= n || class as usize >= self.mtu.len() || flits == 0 {
            return Err(SimError::Build(format!(
                "scripted message {src}->{dst} class {class} of {flits} flits is out of range"
            )));
        }
        let seq = self.scripted.len() as u64;
        self.scripted
            .push(Reverse((at, seq, src, dst, class, flits)));
        Ok(())
    }

    /// Schedules new inter-packet dispatch times for rate-controlled flows: `(cycle, flow,
    /// idt)`, applied at the start of that cycle (`f64::INFINITY`: the flow may not send).
    /// Fails when the NICs have no rate control or a flow does not exist.
    pub fn schedule_idts(&mut self, changes: &[(u64, u32, f64)]) -> Result<(), SimError> {
        if !self.cfg.nic.rate_control {
            return Err(SimError::Build(
                "IDT changes need nic.rate_control = true".into(),
            ));
        }
        for &(at, flow, idt) in changes {
            if flow as usize >= self.flow_local.len() || idt.is_nan() || idt <= 0.0 {
                return Err(SimError::Build(format!(
                    "IDT change of flow {flow} to {idt} at cycle {at}: no such flow or not a \
                     positive IDT"
                )));
            }
            self.idt_schedule.push((at, flow, idt));
        }
        self.idt_schedule.sort_by_key(|&(at, _, _)| at);
        Ok(())
    }

    /// Applies admission control's decisions to the flows (in flow id order): `Some(k)` runs
    /// the flow on path `k`, `None` refuses it (it sends nothing). Fails when the list does not
    /// cover the flows or a path does not exist.
    pub fn admit_flows(&mut self, decisions: &[Option<u8>]) -> Result<(), SimError> {
        if decisions.len() != self.counters.flows.len() {
            return Err(SimError::Build(format!(
                "admission decisions for {} flows, the network has {}",
                decisions.len(),
                self.counters.flows.len()
            )));
        }
        let paths = self.fabric.num_paths();
        for src in &mut self.sources {
            let Some(f) = &mut src.flow else { continue };
            match decisions[f.tag.flow as usize] {
                Some(k) if (k as usize) < paths => f.tag.path = k,
                Some(k) => {
                    return Err(SimError::Build(format!(
                        "flow {}: path {k}, but the fabric offers {paths}",
                        f.tag.flow
                    )))
                }
                None => f.stop = 0,
            }
        }
        Ok(())
    }

    /// Simulates the switches on `n` threads (lanes of contiguous switches; at most one per
    /// switch; deadline-based QoS keeps one). Results do not depend on it. Call before
    /// [`run`](Self::run).
    pub fn set_threads(&mut self, n: usize) -> Result<(), SimError> {
        let n = if self.dl.is_some() { 1 } else { n };
        self.set_lanes(n).map_err(SimError::Build)
    }

    /// The last cycle before `t` in which a flit moved (streaming packets' flits included).
    pub(crate) fn progress_before(&self, t: Cycle) -> Cycle {
        self.last_progress
            .max(self.streams_until.min(t.saturating_sub(1)))
    }

    /// Sends every flit and every credit as a link event of its own: no trains (see
    /// `queue::RX_TRAIN` and `buffer::Train`). The reference the trains are checked against:
    /// results are the same either way, only slower.
    pub fn flit_by_flit(&mut self) {
        self.trains = false;
        self.credit_trains = false;
        self.eject_trains = false;
    }

    /// Records every delivered packet (for tests and debugging; costs memory per packet).
    pub fn enable_trace(&mut self) {
        self.counters.trace = Some(Vec::new());
    }

    /// Checks the flow-control invariants every `cycles` cycles of [`run`](Self::run), in
    /// release builds too (0: never; debug builds default to 64). A violation panics: it is a
    /// bug of the engine, never of the input.
    pub fn check_invariants_every(&mut self, cycles: u64) {
        self.check_every = cycles;
    }

    /// Visits NICs and switches in a new random order every cycle (from `seed`). Results must
    /// not change: each cycle is evaluate-then-commit. For testing that claim.
    pub fn shuffle_visit_order(&mut self, seed: u64) {
        self.set_lanes(1).expect("one lane needs no thread");
        self.shuffle = Some(VisitOrder {
            nics: (0..self.n_endpoints as u32).collect(),
            switches: (0..self.switches.len() as u32).collect(),
            rng: crate::traffic::stream(seed, crate::traffic::StreamKind::Test, 0),
        });
    }

    /// Packets delivered so far, when tracing is enabled.
    pub fn deliveries(&self) -> &[Delivery] {
        self.counters.trace.as_deref().unwrap_or(&[])
    }

    /// Records every routing decision: each packet head routed at each switch (for tests of
    /// routes hop by hop; costs memory per packet and hop).
    pub fn enable_route_trace(&mut self) {
        // The order of the decisions is the order of one lane.
        self.set_lanes(1).expect("one lane needs no thread");
        self.counters.route_trace = Some(Vec::new());
    }

    /// The routing decisions so far, in the order they were taken, when enabled.
    pub fn route_trace(&self) -> &[RouteHop] {
        self.counters.route_trace.as_deref().unwrap_or(&[])
    }

    // ---- the cycle loop ------------------------------------------------------------------

    /// Runs warm-up, measurement and drain, and returns the results.
    ///
    /// Fails with [`SimError::Cancelled`] soon after [`flitsim_topology::cancel::request`]
    /// (the flag is polled once per iteration of the cycle loop); the network is then left
    /// mid-run and should be dropped.
    pub fn run(&mut self) -> Result<RunResult, SimError> {
        // Started before the lane threads, so that they inherit the counters; read after
        // they have ended, so that their counts are in.
        let counting = self.cfg.run.counters.then(crate::hwcount::Counting::start);
        let mut result = self.run_threads();
        if let (Some(c), Ok(r)) = (counting, result.as_mut()) {
            r.performance.counters = Some(c.finish());
        }
        result
    }

    fn run_threads(&mut self) -> Result<RunResult, SimError> {
        // With several lanes, the lanes after the first run on threads of their own that
        // live as long as the loop.
        if self.lanes.len() < 2 {
            return self.run_loop(None);
        }
        let crew = lane::Crew::new(self.lanes.len());
        std::thread::scope(|scope| {
            for k in 1..self.lanes.len() {
                let crew = &crew;
                std::thread::Builder::new()
                    .name(format!("flitsim-lane-{k}"))
                    .spawn_scoped(scope, move || crew.work(k))
                    .map_err(|e| {
                        SimError::Build(format!("run.threads: cannot start a thread: {e}"))
                    })?;
            }
            // Stops the lane threads however the loop ends (even by a panic).
            let _stop = crew.stop_on_drop();
            self.run_loop(Some(&crew))
        })
    }

    fn run_loop(&mut self, crew: Option<&lane::Crew>) -> Result<RunResult, SimError> {
        let started = std::time::Instant::now();
        let process = self.lanes.len() > 1;
        let cpu_started = cpu_seconds(process);
        let w = self.cfg.run.warmup;
        let m = self.cfg.run.measure;
        let window = (w, w + m);
        let hard_end = w + m + self.cfg.run.drain_max;
        let stall = self.cfg.run.stall_cycles.max(1);
        let mut t: Cycle = 0;
        let mut deadlock = None;
        loop {
            flitsim_topology::cancel::check()?;
            let trace_done = match &self.replay {
                None => true,
                Some(r) => {
                    if let Some(f) = r.failure() {
                        return Err(SimError::Build(format!("traffic.trace.path: {f}")));
                    }
                    r.done()
                }
            };
            if t >= window.1
                && ((self.measured_outstanding == 0 && self.scripted.is_empty() && trace_done)
                    || t >= hard_end)
            {
                break;
            }
            if self.buffered_total > 0 && t > self.progress_before(t) + stall {
                deadlock = Some(self.deadlock_report(t));
                break;
            }
            if self.check_every > 0 && t.is_multiple_of(self.check_every) {
                if let Err(e) = self.check_invariants(t) {
                    panic!("cycle {t}: {e}");
                }
            }
            let in_window = t >= window.0 && t < window.1;
            if self.counters.occ_switches != 0 && t >= self.counters.occ_next {
                self.sample_occupancy(t);
            }
            self.deliver_nics(t, in_window);
            self.generate(t, window);
            match self.shuffle.as_mut() {
                None => {
                    // On large fabrics, the NIC `NIC_PREPARE_AHEAD` pending NICs on: its
                    // record and its buffer's counts (a NIC's preparation changes only its
                    // own pending bit).
                    // Half as far, the headers of its buffer's queues (read from the
                    // record), which a refill pushes its packets onto.
                    let prefetch = self.prefetch_packets();
                    let mut ahead = prefetch
                        .then(|| nic::bit_ahead(&self.nic_pending, 0, NIC_PREPARE_AHEAD))
                        .flatten();
                    let mut near = prefetch
                        .then(|| nic::bit_ahead(&self.nic_pending, 0, NIC_PREPARE_AHEAD / 2))
                        .flatten();
                    let mut e = 0;
                    while let Some(k) = nic::next_bit(&self.nic_pending, e) {
                        if let Some(a) = ahead {
                            prefetch_all(&self.nics[a]);
                            self.nic_buf.prefetch(a, Vl(0));
                            ahead = nic::next_bit(&self.nic_pending, a + 1);
                        }
                        if let Some(a) = near {
                            let q = self.nics[a].queues.as_slice();
                            prefetch_ptr(q.as_ptr());
                            prefetch_ptr(q.as_ptr().wrapping_add(q.len().saturating_sub(1)));
                            near = nic::next_bit(&self.nic_pending, a + 1);
                        }
                        self.prepare_nic(k, t, in_window);
                        e = k + 1;
                    }
                }
                Some(order) => {
                    order.shuffle();
                    let nics = std::mem::take(&mut order.nics);
                    for &e in &nics {
                        if nic::has_bit(&self.nic_pending, e as usize) {
                            self.prepare_nic(e as usize, t, in_window);
                        }
                    }
                    if let Some(order) = self.shuffle.as_mut() {
                        order.nics = nics;
                    }
                }
            }
            self.switch_phase(t, in_window, crew);
            // Skip idle time: nothing in flight, nothing queued → jump to the next message.
            if self.events_pending() == 0
                && self.buffered_total == 0
                && self.credits_until <= t
                && self.nics_idle()
            {
                let next = self.gen_calendar.next_time().unwrap_or(NEVER);
                let next = next.min(self.scripted.peek().map(|r| r.0 .0).unwrap_or(NEVER));
                let next = match &self.replay {
                    Some(_) if !self.replay_pending.is_empty() => t + 1,
                    Some(r) => next.min(r.next_time().unwrap_or(NEVER)),
                    None => next,
                };
                let next = next.min(self.idt_schedule.get(self.idt_next).map_or(NEVER, |c| c.0));
                // A finished replay ends the run now, not at the next message of the other
                // sources; so does a run whose sources have all stopped (flows with `stop`).
                // Other runs keep stopping at their sources' next message, as they always
                // have.
                let finished = self.measured_outstanding == 0
                    && self.scripted.is_empty()
                    && match &self.replay {
                        Some(r) => r.done(),
                        None => self.gen_calendar.is_empty(),
                    };
                let limit = if t + 1 < window.1 {
                    window.1
                } else if finished {
                    t + 1 // the run ends here
                } else {
                    hard_end
                };
                t = next.min(limit).max(t + 1);
                self.last_progress = self.last_progress.max(t.saturating_sub(1));
            } else {
                t += 1;
            }
        }
        let wall = started.elapsed().as_secs_f64();
        self.cpu_seconds = cpu_started
            .zip(cpu_seconds(process))
            .map(|(a, b)| (b - a).max(0.0));
        Ok(self.results(t, wall, deadlock))
    }

    /// Records the flits every switch holds in its input and output buffers
    /// (`run.port_timeseries`).
    fn sample_occupancy(&mut self, t: Cycle) {
        let vls = self.vls;
        // Taken before cycle `t`'s deliveries: trains' flits up to cycle `t − 1` are in.
        let done = t.saturating_sub(1);
        let occ = &self.inputs;
        let buffered: Vec<u64> = self
            .switches
            .iter()
            .map(|sw| {
                let lo = sw.base as usize * vls;
                let hi = (sw.base as usize + sw.nports as usize) * vls;
                occ[lo..hi]
                    .iter()
                    .map(|q| q.occ_at(done) as u64)
                    .sum::<u64>()
                    + sw.obuffered as u64
            })
            .collect();
        self.counters.add_occupancy(t, buffered.into_iter());
    }

    fn nics_idle(&self) -> bool {
        self.nics
            .iter()
            .all(|n| n.app_msgs == 0 && n.used == 0 && n.rx_flits == 0)
    }

    /// Whether the loop's thread asks ahead for the records of packets it will eject: on large
    /// fabrics, or with lanes on other cores (whose caches hold the packets they last moved).
    /// On small one-lane fabrics they are in cache anyway.
    fn prefetch_packets(&self) -> bool {
        self.prefetch_queues || self.lanes.len() > 1
    }

    /// Delivers the link events of cycle `t` to the NICs' ports: credits to their output
    /// sides, flits to endpoints (the lanes of the switch phase deliver the switches' own).
    #[inline(never)]
    fn deliver_nics(&mut self, t: Cycle, in_window: bool) {
        let events = self.wheel.take(t);
        // The packet a flit two events on reaches its endpoint with: its line arrives while
        // this event is applied (the loop asked for it when it took the event over, so it is
        // read here for the tail's message); further on, a credit's counts.
        let prefetch = self.prefetch_packets();
        for (k, ev) in events.iter().enumerate() {
            if !prefetch {
            } else {
                if let Some(next) = events.get(k + lane::NIC_DELIVER_AHEAD) {
                    if next.is_flit() {
                        // (A train's head does not read it: see below.)
                        if next.flags & link::F_TRAIN == 0 || !self.eject_trains {
                            self.packets.prefetch(next.pkt);
                        }
                        if next.flags & F_TAIL != 0 {
                            self.messages.prefetch(self.packets[next.pkt].msg);
                        }
                        // The endpoint's train record, which a head sets and a tail reads.
                        let e = next.target.idx().wrapping_sub(self.nic_base as usize);
                        if let Some(r) = self.rx_train.get(e) {
                            self::prefetch(r);
                        }
                    }
                }
                if let Some(far) = events.get(k + lane::DELIVER_AHEAD) {
                    if !far.is_flit() {
                        self.credits.prefetch(far.target.idx(), far.vl);
                    }
                }
            }
            let g = ev.target.idx();
            if !ev.is_flit() {
                if ev.flags & link::F_TRAIN != 0 {
                    self.credits.start_train(g, ev.vl, ev.n as u32, t);
                    self.credits_until = self.credits_until.max(t + ev.n as u64 - 1);
                } else {
                    self.credits.release(g, ev.vl, ev.n as u32);
                }
            } else if self.nic_receive {
                // (No trains reach NICs then.)
                // Waits for the NIC's processor (`nic.receive_time`).
                let nic = &mut self.nics[g - self.nic_base as usize];
                nic.rx.push_back(*ev);
                nic.rx_flits += ev.n as u32;
                nic::set_bit(&mut self.nic_pending, g - self.nic_base as usize, true);
            } else {
                if self.eject_trains {
                    let e = g - self.nic_base as usize;
                    if ev.flags & link::F_TRAIN != 0 {
                        // The head of a train: counted with its body flits when the tail
                        // arrives (or the run ends), one per cycle from this one.
                        debug_assert_eq!(ev.n, 1);
                        self.rx_train[e] = (ev.pkt, t);
                        continue;
                    } else if ev.flags & F_TAIL != 0 && self.rx_train[e].0 == ev.pkt {
                        // The head and the flits between it and the tail arrived one per
                        // cycle.
                        let since = self.rx_train[e].1;
                        self.rx_train[e].0 = PacketId::NONE;
                        self.eject_body(ev.pkt, since, t);
                    }
                }
                self.eject(ev, t, in_window);
            }
        }
        self.wheel.restore(t, events);
    }

    /// The flits of a train from its head up to its tail that reach their endpoint one per
    /// cycle in cycles `from .. to`, counted as [`Network::eject`] counts flits that arrive
    /// as events, cycle by cycle (the tail, which arrives as one, completes the packet).
    fn eject_body(&mut self, pkt: PacketId, from: Cycle, to: Cycle) {
        let p = self.packets[pkt];
        let window = (
            self.cfg.run.warmup,
            self.cfg.run.warmup + self.cfg.run.measure,
        );
        let flow = (p.flow != NO_FLOW).then_some(p.flow);
        self.counters
            .delivered_span(p.class.idx(), flow, (from, to), window);
    }

    /// Flits reach their destination endpoint; the tail completes the packet.
    #[inline(never)]
    pub(crate) fn eject(&mut self, ev: &Event, t: Cycle, in_window: bool) {
        let p = self.packets[ev.pkt];
        let c = &mut self.counters;
        let flow = (p.flow != NO_FLOW).then_some(p.flow);
        c.delivered(p.class.idx(), flow, t, ev.n as u64, in_window);
        // The packets inside an atomic DTable message whose tails arrive now (the message's
        // last packet is counted with its tail below).
        let sp = self.sub_packet;
        let mut last_start = 0;
        if sp != 0 && p.len > sp && p.measured {
            let before = p.delivered;
            let after = before + ev.n;
            self.packets[ev.pkt].delivered = after;
            let width = self.ports[(self.nic_base + p.src) as usize].width.max(1) as u64;
            let mut b = (before / sp + 1) * sp;
            while b <= after && b < p.len {
                // Its head left the NIC `b − sp` flits after the message's head.
                let head = p.inject + (b - sp) as u64 / width;
                c.lat[p.class.idx()].add(t - p.gen);
                c.net_lat[p.class.idx()].add(t - head);
                c.hops_sum += p.hops as u64;
                c.hops_n += 1;
                b += sp;
            }
            last_start = ((p.len - 1) / sp * sp) as u64 / width;
        }
        if ev.flags & F_TAIL == 0 {
            return;
        }
        if p.msg != MSG_NONE {
            if let Some(m) = self.messages.delivered(p.msg, p.len as u32) {
                if m.measured {
                    c.add_message(p.class.idx(), t - m.gen);
                    if p.flow != NO_FLOW {
                        c.flows[p.flow as usize].latency.add(t - m.gen);
                    }
                }
                if m.trace != NO_TRACE {
                    if let Some(r) = &mut self.replay {
                        r.on_received(m.trace, t, m.gen, &mut self.replay_pending);
                    }
                }
            }
        }
        if p.measured {
            c.lat[p.class.idx()].add(t - p.gen);
            c.net_lat[p.class.idx()].add(t - (p.inject + last_start));
            c.hops_sum += p.hops as u64;
            c.hops_n += 1;
            self.measured_outstanding -= 1;
        }
        if let Some(tr) = &mut c.trace {
            tr.push(Delivery {
                src: p.src,
                dst: p.dst,
                class: p.class.0,
                len: p.len,
                seq: p.seq,
                generated: p.gen,
                injected: p.inject,
                delivered: t,
                hops: p.hops,
            });
        }
        self.packets.free(ev.pkt);
    }

    fn results(&mut self, t: Cycle, wall: f64, deadlock: Option<DeadlockReport>) -> RunResult {
        let m = self.cfg.run.measure as f64;
        // Remaining flits, counted from the state (independently of the delivery counters).
        let in_apps: u64 = self
            .nics
            .iter()
            .flat_map(|nic| nic.app.iter().flatten())
            .chain(
                self.nics
                    .iter()
                    .filter_map(|n| n.rate.as_deref())
                    .flat_map(|r| r.queued()),
            )
            .chain(
                self.nics
                    .iter()
                    .filter_map(|n| n.edf.as_deref())
                    .flat_map(|r| r.queued()),
            )
            .map(|m| m.left as u64)
            .sum();
        // Streaming NICs: the flits that left by cycle `t − 1` are out of their buffers.
        for e in 0..self.nics.len() {
            let nic = &mut self.nics[e];
            if nic.streaming() {
                let k = nic.settle(t.saturating_sub(1));
                let v = nic.cur_vl;
                self.nic_buf.release(e, v, k);
            }
        }
        let in_nics: u64 = self
            .nics
            .iter()
            .map(|nic| nic.used as u64 + nic.rx_flits as u64)
            .sum();
        // Before cycle `t`'s deliveries: a train's flits after cycle `t − 1` are on its link.
        let done = t.saturating_sub(1);
        // Streaming packets' flits counted as sent at their heads' start and not sent yet
        // are not flit-hops yet.
        // (Those of a packet to an endpoint were never counted: it is not a switch hop.)
        let unsent: u64 = self
            .inputs
            .iter()
            .enumerate()
            .filter_map(|(i, q)| {
                let n = q.unsent(done) as u64;
                let h = q.head().filter(|_| n > 0)?;
                let s = self.port_names[i / self.vls].0 as usize;
                let out = self.switches[s].base as usize + h.out_port as usize;
                self.ports[out].to_switch().then_some(n)
            })
            .sum();
        self.counters.flit_hops -= unsent;
        // Trains reaching endpoints: the flits between head and tail that arrived by cycle
        // `done` are delivered (counted now); those sent and not arrived are on their links.
        let mut nic_trains_on_links = 0;
        for e in 0..self.rx_train.len() {
            let (pkt, since) = self.rx_train[e];
            if pkt == PacketId::NONE {
                continue;
            }
            self.rx_train[e].0 = PacketId::NONE;
            let body = self.packets[pkt].len as u64 - 2;
            let peer = self.ports[self.nic_base as usize + e].peer;
            let lat = self.ports[peer.idx()].latency as u64;
            // Flit k (1 ≤ k ≤ len − 2) arrives in cycle `since + k`, sent `lat` before; the
            // head (flit 0) arrived in cycle `since`.
            let arrived = done.saturating_sub(since).min(body);
            let sent = (done + lat).saturating_sub(since).min(body);
            self.eject_body(pkt, since, since + 1 + arrived);
            nic_trains_on_links += sent - arrived;
        }
        let trains_on_links: u64 = self
            .inputs
            .iter()
            .enumerate()
            .map(|(i, q)| q.on_link(done, self.ports[i / self.vls].latency as u64) as u64)
            .sum();
        let on_links = trains_on_links
            + nic_trains_on_links
            + std::iter::once(&self.wheel)
                .chain(self.lanes.iter().map(|l| &l.wheel))
                .map(|w| {
                    // A train's head still on its link: its sender has sent the flits of
                    // the cycles since, without events.
                    w.flits_in_flight(t, |ev, at| {
                        let lat = self.ports[ev.target.idx()].latency as u64;
                        let len = self.packets[ev.pkt].len as u64;
                        // A train to an endpoint sends its tail as an event of its own.
                        let len = len - (ev.target.0 >= self.nic_base) as u64;
                        (t + lat).saturating_sub(at).min(len)
                    })
                })
                .sum::<u64>();
        let in_switches: u64 = self
            .inputs
            .iter()
            .map(|q| q.occ_at(done) as u64)
            .sum::<u64>()
            + self
                .obuf
                .queues
                .iter()
                .flat_map(|q| q.iter())
                .map(|b| b.present_exact(done) as u64)
                .sum::<u64>();
        let ports = if self.cfg.run.per_port_stats {
            (0..self.nic_base as usize)
                .filter(|&g| self.ports[g].peer != PortIdx::NONE)
                .map(|g| {
                    let (s, p) = self.display[g];
                    let vl_flits =
                        self.counters.vl_flits[g * self.vls..(g + 1) * self.vls].to_vec();
                    let total: u64 = vl_flits.iter().sum();
                    PortResult {
                        switch: self.display_names[s as usize].clone(),
                        port: p as u32,
                        to_endpoint: self.ports[g].to_endpoint(),
                        vl_flits,
                        utilisation: total as f64 / (m * self.ports[g].width as f64),
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        let trace = self.replay.as_ref().map(|r| r.result());
        let mut result = self.counters.finish(RunEnd {
            cfg: &self.cfg,
            topology: &self.topo_name,
            routing: &self.routing_name,
            endpoints: self.n_endpoints,
            cycles: t,
            wall_seconds: wall,
            build_seconds: self.build_seconds,
            all_measured_delivered: self.measured_outstanding == 0,
            deadlock,
            remaining: in_apps + in_nics + on_links + in_switches,
            ports,
        });
        result.trace = trace;
        result.performance.cpu_seconds = self.cpu_seconds;
        result.performance.threads = self.lanes.len() as u32;
        result.performance.forwarding = match &self.routes {
            RouteSource::ForwardingTable { .. } => "tables",
            RouteSource::Computed(_) => "computed",
            RouteSource::SourceRoute(_) => "source",
        }
        .into();
        if let Some(ts) = result.timeseries.as_mut() {
            if self.counters.port_ts_ports != 0 {
                let bins = ts.classes.first().map_or(0, |c| c.flits.len());
                ts.ports = (0..self.nic_base as usize)
                    .filter(|&g| self.ports[g].peer != PortIdx::NONE)
                    .map(|g| {
                        let (s, p) = self.display[g];
                        PortSeries {
                            switch: self.display_names[s as usize].clone(),
                            port: p as u32,
                            flits: self.counters.port_bins(g, bins),
                        }
                    })
                    .collect();
                ts.switches = self
                    .switches
                    .iter()
                    .enumerate()
                    .map(|(k, sw)| SwitchSeries {
                        switch: self.switch_names[self.port_names[sw.base as usize].0 as usize]
                            .clone(),
                        flits: self.counters.occupancy_bins(k, bins),
                    })
                    .collect();
            }
        }
        if let Some(dl) = &self.dl {
            let names = self.cfg.traffic.classes.iter().map(|c| c.name.clone());
            result.deadline = Some(dl.result(names));
        }
        result
    }
}
