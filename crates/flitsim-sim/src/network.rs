//! The flit-level engine: [`Network::build`] allocates every buffer and table once, then
//! [`Network::run`] simulates cycle by cycle.
//!
//! # Model (one cycle = one flit on a width-1 link)
//!
//! * **Ports** are numbered globally: switch ports first (`Topology::port_index`), then one port
//!   per endpoint. Each port has an output side (the link it drives, with the sender's view of the
//!   receiver's buffer) and an input side (the receiver's VL buffers).
//! * **Links** are delay lines: a flit sent in cycle `t` over a link of latency `L` is in the
//!   receiver's buffer at the start of cycle `t + L`; the credit for a flit that leaves a buffer in
//!   cycle `t` is back at the sender at `t + L`. Events travel through a time wheel; every effect
//!   between components has latency ≥ 1, so each cycle is evaluate-then-commit and the order in
//!   which components are visited never changes a result.
//! * **Switches** are input-queued crossbars. A head flit arriving in cycle `t` (or becoming the
//!   head of its VL in cycle `t`) may request its output from cycle `t + routing_delay`. A
//!   separable allocator runs every cycle in which something changed: each input port's
//!   round-robin arbiter picks one VL whose head can start (output free, and, for virtual
//!   cut-through, credits for the whole packet; for wormhole, one credit and the output VL not
//!   held by another packet); each output port's scheduler then picks a VL among its requests and
//!   a round-robin arbiter picks the input. The granted packet holds its input VL and the output
//!   port until its tail has passed (packets never interleave on a link, as in InfiniBand); its
//!   first flit crosses in the cycle of the grant. A connection moves up to `width` flits per cycle
//!   of the flits already present (cut-through), so an uncontended hop costs
//!   `routing_delay + link latency` cycles.
//! * **Endpoints** generate messages into an unbounded application queue per class, segment them
//!   into packets of at most the class MTU when they fit into the bounded NIC buffer, and inject
//!   through an output scheduler under the same credit rules; they consume flits at link rate.
//!
//! The latency of a lone packet of `P` flits crossing `k` switches over links of latency `L` with
//! routing delay `R`, measured from generation to tail delivery, is therefore
//! `(k + 1)·L + k·R + P − 1` cycles (see the `closed_form` tests).
use crate::config::{
    ExperimentConfig, InjectionKind, SchedulerConfig, SharedBufferConfig, SwitchOrganisation,
    Switching,
};
use crate::opa::{OpaLayout, PortRole};
use crate::scheduler::{Candidate, OutputScheduler, RoundRobinArbiter};
use crate::stats::*;
use crate::traffic::{stream, ComponentRng, Pattern, StreamKind};
use crate::SimError;
use flitsim_manager::FabricConfig;
use flitsim_topology::{EndpointId, NodeId, SwitchId, Topology};
use rand::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const NONE: u32 = u32::MAX;
const NEVER: u64 = u64::MAX;
const NO_VL: u8 = u8::MAX;
/// `PortInfo::out_org` of a port without an output buffer.
const NO_ORG: u8 = u8::MAX;
const EV_FLIT: u8 = 1;
const F_HEAD: u8 = 2;
const F_TAIL: u8 = 4;

/// A switch allocation request: (input port, input VL, output port, output VL, SL of the packet).
type Request = (u16, u8, u16, u8, u8);

/// A scripted message: (cycle, order of scheduling, source, destination, class, flits).
type Scripted = (u64, u64, u32, u32, u8, u32);

/// A flit batch or credit return in flight on a link.
#[derive(Clone, Copy, Debug)]
struct Event {
    target: u32,
    pkt: u32,
    n: u16,
    vl: u8,
    flags: u8,
}

/// Delay lines of all links, as one time wheel indexed by arrival cycle.
struct TimeWheel {
    slots: Vec<Vec<Event>>,
    mask: u64,
    pending: u64,
}

impl TimeWheel {
    fn new(max_latency: u32) -> Self {
        let size = (max_latency as usize + 1).next_power_of_two();
        TimeWheel {
            slots: (0..size).map(|_| Vec::new()).collect(),
            mask: size as u64 - 1,
            pending: 0,
        }
    }
    #[inline]
    fn push(&mut self, at: u64, ev: Event) {
        self.slots[(at & self.mask) as usize].push(ev);
        self.pending += 1;
    }
}

#[derive(Clone, Copy, Debug)]
struct Packet {
    src: u32,
    dst: u32,
    gen: u64,
    inject: u64,
    seq: u64,
    len: u16,
    class: u8,
    wire_sl: u8,
    hops: u16,
    measured: bool,
}

/// A packet (partly) held in an input VL buffer.
#[derive(Clone, Copy, Debug)]
struct BufPkt {
    pkt: u32,
    len: u16,
    recv: u16,
    sent: u16,
    out_port: u16,
    out_vl: u8,
    busy: bool,
    arrived: u64,
    ready: u64,
}

#[derive(Clone, Copy, Debug)]
struct Conn {
    in_g: u32,
    out_g: u32,
    in_vl: u8,
    out_vl: u8,
}

struct SwitchState {
    base: u32,
    nports: u16,
    /// Crossbar connections an input port may hold at once.
    max_conns: u8,
    /// Flits per cycle a crossbar connection moves into an output buffer.
    speedup: u16,
    conns: Vec<Conn>,
    /// Flits in this switch's output buffers.
    obuffered: u32,
    dirty: bool,
    /// A ready head waits for credits: a credit arrival must re-run allocation.
    credit_blocked: bool,
    wake_at: u64,
}

#[derive(Clone, Copy, Debug)]
struct PortInfo {
    /// Global index of the port at the other end of the link (NONE if unconnected).
    peer: u32,
    latency: u32,
    width: u16,
    /// The peer is an endpoint: it sinks at link rate, no credits needed.
    to_endpoint: bool,
    /// The peer is a switch (switch-to-switch link: counted in flit-hops).
    to_switch: bool,
    /// A packet crossing the crossbar from this input counts as a switch hop.
    hop: bool,
    /// Organisation (index into `Network::orgs`) of this port's input buffer,
    in_org: u8,
    /// of the peer's input buffer (the sender's view),
    tx_org: u8,
    /// and of this port's output buffer (`NO_ORG`: none).
    out_org: u8,
}

#[derive(Clone, Copy, Debug)]
struct Msg {
    gen: u64,
    dst: u32,
    left: u32,
    measured: bool,
}

struct Nic {
    app: Vec<VecDeque<Msg>>,
    app_msgs: u32,
    queues: Vec<VecDeque<u32>>,
    used: u32,
    cur: u32,
    cur_sent: u16,
    cur_vl: u8,
    rr_class: u8,
    seq: u64,
    /// Flits in the NIC buffer per VL.
    vl_used: Vec<u32>,
    /// Flits that must leave before a waiting head can fit (0: try the refill).
    skip: u32,
}

struct Source {
    endpoint: u32,
    class: u8,
    /// Messages per cycle.
    p: f64,
    ln_q: f64,
    period: f64,
    acc: f64,
    rng: ComponentRng,
}

/// Receiver buffer organisation as seen by the sender: per-VL minimum (reserved) and maximum,
/// and the shared pool above the minima.
#[derive(Clone, Debug)]
struct BufferOrg {
    min: Vec<u32>,
    max: Vec<u32>,
    shared: u32,
}

impl BufferOrg {
    fn fixed(vls: usize, per_vl: u32) -> Self {
        BufferOrg {
            min: vec![per_vl; vls],
            max: vec![per_vl; vls],
            shared: 0,
        }
    }
    fn shared(vls: usize, sb: &SharedBufferConfig) -> Self {
        BufferOrg {
            min: vec![sb.min_per_vl; vls],
            max: vec![sb.max_per_vl; vls],
            shared: sb.total_flits - sb.min_per_vl * vls as u32,
        }
    }
    /// The most one VL can ever hold.
    fn vl_cap(&self) -> u32 {
        self.max[0].min(self.min[0] + self.shared)
    }
    /// Flits of the whole port.
    fn total(&self) -> u32 {
        self.min.iter().sum::<u32>() + self.shared
    }
    #[inline(always)]
    fn over_of(&self, vl: usize, used: u32) -> u32 {
        used.saturating_sub(self.min[vl])
    }
    /// Whether `n` more flits fit into VL `vl` holding `used`, with `over` of the pool taken.
    #[inline(always)]
    fn fits(&self, vl: usize, used: u32, over: u32, n: u32) -> bool {
        if used + n > self.max[vl] {
            return false;
        }
        self.shared == 0
            || over + self.over_of(vl, used + n) - self.over_of(vl, used) <= self.shared
    }
    /// Pool flits taken when VL `vl` grows from `used` by `n`.
    #[inline(always)]
    fn grow(&self, vl: usize, used: u32, n: u32) -> u32 {
        if self.shared == 0 {
            0
        } else {
            self.over_of(vl, used + n) - self.over_of(vl, used)
        }
    }
}

/// One delivered packet, recorded when tracing is on (tests, debugging).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Traffic class.
    pub class: u8,
    /// Packet length, flits.
    pub len: u16,
    /// Creation order at the source NIC.
    pub seq: u64,
    /// Cycle the message was generated.
    pub generated: u64,
    /// Cycle the head left the NIC.
    pub injected: u64,
    /// Cycle the tail arrived.
    pub delivered: u64,
    /// Switches traversed.
    pub hops: u16,
}

/// A built fabric ready to simulate.
pub struct Network {
    cfg: ExperimentConfig,
    topo_name: String,
    routing_name: String,
    config_hash: String,
    vls: usize,
    switching: Switching,
    routing_delay: u64,
    n_endpoints: usize,
    nic_base: u32,
    ports: Vec<PortInfo>,
    port_names: Vec<(u32, u16)>,
    switch_names: Vec<String>,
    /// Per port, the (name index into `display_names`, port number) shown in results: the
    /// fabric's switch and port for external ports, the internal node's otherwise.
    display: Vec<(u32, u16)>,
    display_names: Vec<String>,
    /// The hierarchical switches' layout (`switch.organisation = "opa"`).
    opa: Option<OpaLayout>,
    // sender side
    used: Vec<u32>,
    over: Vec<u32>,
    out_busy: Vec<bool>,
    vl_owner: Vec<u32>,
    sched: Vec<OutputScheduler>,
    rr_out: Vec<RoundRobinArbiter>,
    vl_flits: Vec<u64>,
    // receiver side
    bufs: Vec<VecDeque<BufPkt>>,
    occ: Vec<u32>,
    in_conns: Vec<u8>,
    /// Output buffers per (port, VL), the flits reserved in them, and the pool flits taken
    /// per port.
    obufs: Vec<VecDeque<BufPkt>>,
    oused: Vec<u32>,
    oover: Vec<u32>,
    /// Per output port, the VLs with packets in the output buffer, and the VL on the link.
    o_waiting: Vec<u32>,
    o_cur: Vec<u8>,
    /// No head of this output port's buffers could start at the last try; nothing to do until
    /// credits arrive or a new packet enters.
    o_stalled: Vec<bool>,
    /// Round robin among VLs at the crossbar stage when output buffers exist.
    xsched: Vec<OutputScheduler>,
    /// Per input port, the VLs whose head packet is not yet forwarding (bit v = VL v).
    waiting: Vec<u32>,
    rr_in: Vec<RoundRobinArbiter>,
    /// Buffer organisations, indexed by `PortInfo::{in_org, tx_org, out_org}`.
    orgs: Vec<BufferOrg>,
    // switches, tables
    switches: Vec<SwitchState>,
    lft: Vec<Vec<u16>>,
    fabric: FabricConfig,
    // endpoints and traffic
    nics: Vec<Nic>,
    nic_sl2vl: Vec<u8>,
    nic_capacity: u32,
    mtu: Vec<u16>,
    sources: Vec<Source>,
    gen_heap: BinaryHeap<Reverse<(u64, u32)>>,
    scripted: BinaryHeap<Reverse<Scripted>>,
    pattern: Pattern,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    wheel: TimeWheel,
    // scratch
    reqs: Vec<Request>,
    cands: Vec<Candidate>,
    // counters
    buffered_total: u64,
    flits_generated: u64,
    flits_delivered: u64,
    flit_hops: u64,
    measured_outstanding: u64,
    window_generated: Vec<u64>,
    window_accepted: Vec<u64>,
    lat: Vec<Histogram>,
    net_lat: Vec<Histogram>,
    hops_sum: u64,
    hops_n: u64,
    last_progress: u64,
    trace: Option<Vec<Delivery>>,
    build_seconds: f64,
}

impl Network {
    /// Builds the network: checks the tables against the topology, allocates every buffer,
    /// and sets up the traffic sources. Fails with a message naming the offending key.
    pub fn build(
        cfg: &ExperimentConfig,
        topo: &Topology,
        fabric: FabricConfig,
    ) -> Result<Network, SimError> {
        let started = std::time::Instant::now();
        let err = |m: String| SimError::Build(m);
        fabric.check_shape(topo).map_err(|e| err(e.to_string()))?;
        let vls = fabric.num_vls as usize;
        if vls > 32 {
            return Err(err(format!("{vls} VLs: at most 32 are supported")));
        }
        let classes = cfg.traffic.classes.len();
        let n = topo.num_endpoints();
        if n == 0 {
            return Err(err("the topology has no endpoints".into()));
        }
        let mtu: Vec<u16> = cfg
            .traffic
            .classes
            .iter()
            .map(|c| {
                c.mtu_flits
                    .unwrap_or(c.message_flits)
                    .min(c.message_flits)
                    .min(u16::MAX as u32) as u16
            })
            .collect();
        let max_mtu = *mtu.iter().max().unwrap() as u32;
        // Buffer organisations: 0 = switch input buffers, then output buffers and the
        // hierarchical switch's internal buffers when configured.
        let vct = cfg.switch.switching == Switching::Vct;
        let mut orgs: Vec<(String, BufferOrg)> = vec![match &cfg.switch.shared_buffer {
            None => (
                "switch.vl_buffer_flits".into(),
                BufferOrg::fixed(vls, cfg.switch.vl_buffer_flits),
            ),
            Some(sb) => ("switch.shared_buffer".into(), BufferOrg::shared(vls, sb)),
        }];
        let out_org = match (
            &cfg.switch.shared_output_buffer,
            cfg.switch.output_buffer_flits,
        ) {
            (Some(sb), _) => {
                orgs.push((
                    "switch.shared_output_buffer".into(),
                    BufferOrg::shared(vls, sb),
                ));
                (orgs.len() - 1) as u8
            }
            (None, 0) => NO_ORG,
            (None, ob) => {
                orgs.push((
                    "switch.output_buffer_flits".into(),
                    BufferOrg::fixed(vls, ob),
                ));
                (orgs.len() - 1) as u8
            }
        };
        let layout = match cfg.switch.organisation {
            SwitchOrganisation::Crossbar => None,
            SwitchOrganisation::Opa => {
                if out_org == NO_ORG {
                    return Err(err(
                        "switch.organisation = \"opa\" needs output buffers: set switch.shared_output_buffer or switch.output_buffer_flits".into(),
                    ));
                }
                Some(OpaLayout::build(topo, &cfg.switch.opa).map_err(err)?)
            }
        };
        let (central_org, stage_org) = if layout.is_some() {
            let o = &cfg.switch.opa;
            let per_link = o.central_buffer_flits / o.mport_links;
            if o.central_min_per_vl * vls as u32 > per_link || o.central_min_per_vl > per_link {
                return Err(err(format!(
                    "switch.opa.central_buffer_flits = {}: each of the {} links' share ({per_link} flits) must hold central_min_per_vl = {} flits for each of {vls} VLs",
                    o.central_buffer_flits, o.mport_links, o.central_min_per_vl
                )));
            }
            let central = SharedBufferConfig {
                total_flits: per_link,
                min_per_vl: o.central_min_per_vl,
                max_per_vl: per_link,
            };
            orgs.push((
                "switch.opa.central_buffer_flits".into(),
                BufferOrg::shared(vls, &central),
            ));
            orgs.push((
                "switch.opa.central_output_flits".into(),
                BufferOrg::fixed(vls, o.central_output_flits),
            ));
            ((orgs.len() - 2) as u8, (orgs.len() - 1) as u8)
        } else {
            (0, 0)
        };
        for (key, org) in &orgs {
            let cap = org.vl_cap();
            if cap == 0 {
                return Err(err(format!(
                    "{key}: buffers must hold at least one flit per VL"
                )));
            }
            if vct && cap < max_mtu {
                return Err(err(format!(
                    "{key}: a VL can hold at most {cap} flits, smaller than the largest MTU ({max_mtu} flits); \
                     virtual cut-through needs room for a whole packet"
                )));
            }
        }
        let orgs: Vec<BufferOrg> = orgs.into_iter().map(|(_, o)| o).collect();
        if cfg.nic.buffer_flits < max_mtu {
            return Err(err(format!(
                "nic.buffer_flits = {} is smaller than the largest MTU ({max_mtu} flits)",
                cfg.nic.buffer_flits
            )));
        }
        // Every destination must be reachable from every switch without loops.
        fabric.check_routes(topo).map_err(|e| err(e.to_string()))?;
        // The engine simulates the expanded network when switches are hierarchical.
        let etopo = layout.as_ref().map(|l| &l.topo).unwrap_or(topo);
        // Ports.
        let nsp = etopo.total_switch_ports();
        let g_total = nsp + n;
        let nic_base = nsp as u32;
        let gidx = |r: flitsim_topology::PortRef| -> u32 {
            match r.node {
                NodeId::Switch(s) => etopo.port_index(SwitchId(s), r.port) as u32,
                NodeId::Endpoint(e) => nic_base + e,
            }
        };
        let mut ports = vec![
            PortInfo {
                peer: NONE,
                latency: 1,
                width: 1,
                to_endpoint: false,
                to_switch: false,
                hop: false,
                in_org: 0,
                tx_org: 0,
                out_org: NO_ORG,
            };
            g_total
        ];
        let mut port_names = vec![(0u32, 0u16); g_total];
        let mut display = vec![(0u32, 0u16); g_total];
        let mut display_names: Vec<String> =
            topo.switches().iter().map(|s| s.name.clone()).collect();
        let mut switches = Vec::with_capacity(etopo.num_switches());
        let switch_sched_cfg =
            crate::qos::resolve(cfg, &mtu.iter().map(|&m| m as u32).collect::<Vec<_>>())
                .map_err(err)?;
        let mut internal_port = vec![false; g_total];
        for s in 0..etopo.num_switches() as u32 {
            let np = etopo.num_ports(SwitchId(s));
            let base = etopo.port_index(SwitchId(s), 0) as u32;
            let name_idx = match &layout {
                None => s,
                Some(_) => {
                    display_names.push(etopo.switches()[s as usize].name.clone());
                    (display_names.len() - 1) as u32
                }
            };
            for p in 0..np {
                let g = (base + p as u32) as usize;
                port_names[g] = (s, p);
                let role = layout
                    .as_ref()
                    .map(|l| l.role(s, p))
                    .unwrap_or(PortRole::External);
                display[g] = match (&layout, role) {
                    (Some(l), PortRole::External) => l.fabric_port(s, p),
                    _ => (name_idx, p),
                };
                let (in_org, o_org) = match role {
                    PortRole::External => (0, out_org),
                    PortRole::Up => (central_org, NO_ORG),
                    PortRole::Down => (stage_org, NO_ORG),
                };
                internal_port[g] = role != PortRole::External;
                ports[g].in_org = in_org;
                ports[g].out_org = o_org;
                ports[g].hop = role == PortRole::External;
                if let Some(peer) = etopo.switch_peer(SwitchId(s), p) {
                    let l = etopo.links()[peer.link as usize];
                    let inside = layout
                        .as_ref()
                        .is_some_and(|lay| lay.internal[peer.link as usize]);
                    ports[g].peer = gidx(peer.remote);
                    ports[g].latency = l.latency;
                    ports[g].width = l.width.min(u16::MAX as u32) as u16;
                    ports[g].to_endpoint = matches!(peer.remote.node, NodeId::Endpoint(_));
                    ports[g].to_switch = !inside && matches!(peer.remote.node, NodeId::Switch(_));
                }
            }
            // With output buffers an input holds one crossbar connection at a time.
            let (max_conns, speedup) = match &layout {
                None => (
                    if out_org != NO_ORG {
                        1
                    } else {
                        cfg.switch.speedup.min(255) as u8
                    },
                    cfg.switch.speedup.min(u16::MAX as u32) as u16,
                ),
                Some(l) => match l.node[s as usize].1 {
                    crate::opa::NodeKind::MPort(_) => (
                        1,
                        cfg.switch.opa.mport_link_width.min(u16::MAX as u32) as u16,
                    ),
                    crate::opa::NodeKind::Central => (1, 1),
                },
            };
            switches.push(SwitchState {
                base,
                nports: np,
                max_conns,
                speedup,
                conns: Vec::with_capacity(np as usize),
                obuffered: 0,
                dirty: false,
                credit_blocked: false,
                wake_at: NEVER,
            });
        }
        for e in 0..n as u32 {
            let peer = etopo.endpoint_peer(EndpointId(e));
            let l = etopo.links()[peer.link as usize];
            let g = (nic_base + e) as usize;
            ports[g].peer = gidx(peer.remote);
            ports[g].latency = l.latency;
            ports[g].width = l.width.min(u16::MAX as u32) as u16;
        }
        for g in 0..g_total {
            let peer = ports[g].peer;
            if peer != NONE && !ports[g].to_endpoint {
                ports[g].tx_org = ports[peer as usize].in_org;
            }
        }
        let mtu_flits: Vec<u32> = mtu.iter().map(|&m| m as u32).collect();
        let port_scheds = switch_sched_cfg;
        let switch_sched = OutputScheduler::new(&port_scheds.switch, vls as u8, &mtu_flits)
            .map_err(|m| err(format!("switch scheduler: {m}")))?;
        let nic_sched = OutputScheduler::new(&port_scheds.nic, vls as u8, &mtu_flits)
            .map_err(|m| err(format!("NIC scheduler: {m}")))?;
        let internal_sched =
            OutputScheduler::new(&SchedulerConfig::RoundRobin, vls as u8, &mtu_flits)
                .map_err(|m| err(format!("internal scheduler: {m}")))?;
        let sched: Vec<OutputScheduler> = (0..g_total)
            .map(|g| {
                if g >= nsp {
                    nic_sched.clone()
                } else if internal_port[g] {
                    internal_sched.clone()
                } else {
                    switch_sched.clone()
                }
            })
            .collect();
        // Traffic.
        let pattern = Pattern::build(
            cfg.traffic.pattern,
            cfg.traffic.hotspot.as_ref(),
            topo,
            cfg.seed,
        )
        .map_err(err)?;
        let mut sources = Vec::new();
        let mut gen_heap = BinaryHeap::new();
        for e in 0..n as u32 {
            for (c, cc) in cfg.traffic.classes.iter().enumerate() {
                let rate = cfg.class_rate(c);
                if rate <= 0.0 {
                    continue;
                }
                let p = (rate / cc.message_flits as f64).min(1.0);
                let id = sources.len() as u32;
                let mut src = Source {
                    endpoint: e,
                    class: c as u8,
                    p,
                    ln_q: (1.0 - p).ln(),
                    period: 1.0 / p,
                    acc: 0.0,
                    rng: stream(cfg.seed, StreamKind::Source, e as u64 * 64 + c as u64),
                };
                let first = match cfg.traffic.injection {
                    InjectionKind::Bernoulli => src.geometric_gap() - 1,
                    InjectionKind::Cbr => {
                        src.acc = src.rng.gen::<f64>() * src.period;
                        src.acc.floor() as u64
                    }
                };
                gen_heap.push(Reverse((first, id)));
                sources.push(src);
            }
        }
        let nics = (0..n)
            .map(|_| Nic {
                app: (0..classes).map(|_| VecDeque::new()).collect(),
                app_msgs: 0,
                queues: (0..vls).map(|_| VecDeque::new()).collect(),
                used: 0,
                cur: NONE,
                cur_sent: 0,
                cur_vl: 0,
                rr_class: 0,
                seq: 0,
                vl_used: vec![0; vls],
                skip: 0,
            })
            .collect();
        let lft = fabric.lft.clone();
        let nic_sl2vl = fabric.nic_sl2vl.clone();
        let wheel = TimeWheel::new(etopo.max_latency());
        let mut net = Network {
            cfg: cfg.clone(),
            topo_name: topo.name().to_string(),
            routing_name: fabric.engine.clone(),
            config_hash: cfg.hash(),
            vls,
            switching: cfg.switch.switching,
            routing_delay: cfg.switch.routing_delay as u64,
            n_endpoints: n,
            nic_base,
            ports,
            port_names,
            switch_names: etopo.switches().iter().map(|s| s.name.clone()).collect(),
            display,
            display_names,
            used: vec![0; g_total * vls],
            over: vec![0; g_total],
            out_busy: vec![false; g_total],
            vl_owner: vec![NONE; g_total * vls],
            sched,
            rr_out: vec![RoundRobinArbiter::default(); g_total],
            vl_flits: vec![0; g_total * vls],
            bufs: (0..g_total * vls).map(|_| VecDeque::new()).collect(),
            occ: vec![0; g_total * vls],
            in_conns: vec![0; g_total],
            waiting: vec![0; g_total],
            obufs: if out_org != NO_ORG {
                (0..g_total * vls).map(|_| VecDeque::new()).collect()
            } else {
                Vec::new()
            },
            oused: vec![0; g_total * vls],
            oover: vec![0; g_total],
            o_waiting: vec![0; g_total],
            o_cur: vec![NO_VL; g_total],
            o_stalled: vec![false; g_total],
            xsched: vec![
                OutputScheduler::RoundRobin {
                    last: vls as u8 - 1,
                    vls: vls as u8
                };
                g_total
            ],
            rr_in: vec![RoundRobinArbiter::default(); g_total],
            orgs,
            opa: layout,
            switches,
            lft,
            fabric,
            nics,
            nic_sl2vl,
            nic_capacity: cfg.nic.buffer_flits,
            mtu,
            sources,
            gen_heap,
            scripted: BinaryHeap::new(),
            pattern,
            packets: Vec::new(),
            free_packets: Vec::new(),
            wheel,
            reqs: Vec::new(),
            cands: Vec::new(),
            buffered_total: 0,
            flits_generated: 0,
            flits_delivered: 0,
            flit_hops: 0,
            measured_outstanding: 0,
            window_generated: vec![0; classes],
            window_accepted: vec![0; classes],
            lat: vec![Histogram::default(); classes],
            net_lat: vec![Histogram::default(); classes],
            hops_sum: 0,
            hops_n: 0,
            last_progress: 0,
            trace: None,
            build_seconds: 0.0,
        };
        net.build_seconds = started.elapsed().as_secs_f64();
        Ok(net)
    }

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

    /// Records every delivered packet (for tests and debugging; costs memory per packet).
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    /// Packets delivered so far, when tracing is enabled.
    pub fn deliveries(&self) -> &[Delivery] {
        self.trace.as_deref().unwrap_or(&[])
    }

    // ---- buffer accounting (sender's view of the receiver) -------------------------------

    #[inline(always)]
    fn can_accept(&self, g: usize, vl: usize, n: u32) -> bool {
        let port = &self.ports[g];
        if port.to_endpoint {
            return true;
        }
        self.orgs[port.tx_org as usize].fits(vl, self.used[g * self.vls + vl], self.over[g], n)
    }

    #[inline]
    fn reserve(&mut self, g: usize, vl: usize, n: u32) {
        let port = &self.ports[g];
        if port.to_endpoint {
            return;
        }
        let i = g * self.vls + vl;
        let u = self.used[i];
        self.over[g] += self.orgs[port.tx_org as usize].grow(vl, u, n);
        self.used[i] = u + n;
    }

    #[inline]
    fn release(&mut self, g: usize, vl: usize, n: u32) {
        let i = g * self.vls + vl;
        let u = self.used[i];
        debug_assert!(u >= n, "credit return exceeds outstanding flits");
        self.over[g] -= self.orgs[self.ports[g].tx_org as usize].grow(vl, u - n, n);
        self.used[i] = u - n;
    }

    /// Whether `n` more flits fit into output buffer (`g`, `vl`).
    #[inline(always)]
    fn ofits(&self, g: usize, vl: usize, n: u32) -> bool {
        self.orgs[self.ports[g].out_org as usize].fits(
            vl,
            self.oused[g * self.vls + vl],
            self.oover[g],
            n,
        )
    }

    #[inline]
    fn oreserve(&mut self, g: usize, vl: usize, n: u32) {
        let i = g * self.vls + vl;
        let u = self.oused[i];
        self.oover[g] += self.orgs[self.ports[g].out_org as usize].grow(vl, u, n);
        self.oused[i] = u + n;
    }

    #[inline]
    fn orelease(&mut self, g: usize, vl: usize, n: u32) {
        let i = g * self.vls + vl;
        let u = self.oused[i];
        self.oover[g] -= self.orgs[self.ports[g].out_org as usize].grow(vl, u - n, n);
        self.oused[i] = u - n;
    }

    /// Whether a packet with `remaining` flits may start on output `g`, VL `vl`: room for all of
    /// it under virtual cut-through; one credit and the VL not held by another packet under
    /// wormhole.
    #[inline]
    fn can_start(&self, g: usize, vl: usize, remaining: u32) -> bool {
        match self.switching {
            Switching::Vct => self.can_accept(g, vl, remaining),
            Switching::Wormhole => {
                self.vl_owner[g * self.vls + vl] == NONE && self.can_accept(g, vl, 1)
            }
        }
    }

    /// Largest number of flits (≤ `want`) that fit into output buffer (`g`, `vl`) now.
    #[inline]
    fn ocredits_for(&self, g: usize, vl: usize, want: u32) -> u32 {
        let mut k = 0;
        while k < want && self.ofits(g, vl, k + 1) {
            k += 1;
        }
        k
    }

    /// Largest number of flits (≤ `want`) that may be sent now on a wormhole VL.
    #[inline]
    fn credits_for(&self, g: usize, vl: usize, want: u32) -> u32 {
        let mut k = 0;
        while k < want && self.can_accept(g, vl, k + 1) {
            k += 1;
        }
        k
    }

    // ---- the cycle loop ------------------------------------------------------------------

    /// Runs warm-up, measurement and drain, and returns the results.
    pub fn run(&mut self) -> RunResult {
        let started = std::time::Instant::now();
        let w = self.cfg.run.warmup;
        let m = self.cfg.run.measure;
        let window = (w, w + m);
        let hard_end = w + m + self.cfg.run.drain_max;
        let stall = self.cfg.run.stall_cycles.max(1);
        let mut t: u64 = 0;
        let mut deadlock = None;
        loop {
            if t >= window.1
                && ((self.measured_outstanding == 0 && self.scripted.is_empty()) || t >= hard_end)
            {
                break;
            }
            if self.buffered_total > 0 && t > self.last_progress + stall {
                deadlock = Some(self.deadlock_report(t));
                break;
            }
            if cfg!(debug_assertions) && t.is_multiple_of(64) {
                if let Err(e) = self.check_invariants() {
                    panic!("cycle {t}: {e}");
                }
            }
            self.deliver(t, window);
            self.generate(t, window);
            for e in 0..self.n_endpoints {
                let nic = &self.nics[e];
                if nic.app_msgs > 0 || nic.used > 0 {
                    self.step_nic(e, t, window);
                }
            }
            for s in 0..self.switches.len() {
                let sw = &self.switches[s];
                if sw.dirty || sw.wake_at <= t {
                    self.allocate(s, t);
                }
                if !self.switches[s].conns.is_empty() {
                    self.advance(s, t, window);
                }
                if self.switches[s].obuffered > 0 {
                    self.drain_outputs(s, t, window);
                }
            }
            // Skip idle time: nothing in flight, nothing queued → jump to the next message.
            if self.wheel.pending == 0 && self.buffered_total == 0 && self.nics_idle() {
                let next = self.gen_heap.peek().map(|r| r.0 .0).unwrap_or(NEVER);
                let next = next.min(self.scripted.peek().map(|r| r.0 .0).unwrap_or(NEVER));
                let limit = if t + 1 < window.1 { window.1 } else { hard_end };
                t = next.min(limit).max(t + 1);
                self.last_progress = self.last_progress.max(t.saturating_sub(1));
            } else {
                t += 1;
            }
        }
        let wall = started.elapsed().as_secs_f64();
        self.results(t, wall, deadlock)
    }

    fn nics_idle(&self) -> bool {
        self.nics.iter().all(|n| n.app_msgs == 0 && n.used == 0)
    }

    #[inline(never)]
    fn deliver(&mut self, t: u64, window: (u64, u64)) {
        let slot = (t & self.wheel.mask) as usize;
        let events = std::mem::take(&mut self.wheel.slots[slot]);
        self.wheel.pending -= events.len() as u64;
        for ev in &events {
            let g = ev.target as usize;
            if ev.flags & EV_FLIT == 0 {
                self.release(g, ev.vl as usize, ev.n as u32);
                self.o_stalled[g] = false;
                if g < self.nic_base as usize {
                    let sw = &mut self.switches[self.port_names[g].0 as usize];
                    sw.dirty |= sw.credit_blocked;
                }
            } else if g >= self.nic_base as usize {
                self.eject(ev, t, window);
            } else {
                self.arrive(ev, t);
            }
        }
        let mut events = events;
        events.clear();
        self.wheel.slots[slot] = events;
    }

    #[inline(never)]
    fn arrive(&mut self, ev: &Event, t: u64) {
        let g = ev.target as usize;
        let (s, in_port) = self.port_names[g];
        let q = &mut self.bufs[g * self.vls + ev.vl as usize];
        if ev.flags & F_HEAD != 0 {
            let p = &self.packets[ev.pkt as usize];
            let sw = &mut self.switches[s as usize];
            let (out_port, out_vl) = match &self.opa {
                None => {
                    let out_port = self.lft[s as usize][p.dst as usize];
                    let np = sw.nports as usize;
                    let vl = self.fabric.vl(
                        s as usize,
                        np,
                        in_port as usize,
                        out_port as usize,
                        p.wire_sl,
                    );
                    (out_port, vl)
                }
                Some(l) => l.route(&self.fabric, s, in_port, p.dst, p.wire_sl, ev.vl),
            };
            // A packet entering an empty VL is its head at once; otherwise it becomes the head
            // (and starts waiting) when the packet before it leaves.
            let ready = if q.is_empty() {
                let r = t + self.routing_delay;
                sw.wake_at = sw.wake_at.min(r);
                self.waiting[g] |= 1 << ev.vl;
                r
            } else {
                NEVER
            };
            q.push_back(BufPkt {
                pkt: ev.pkt,
                len: p.len,
                recv: ev.n,
                sent: 0,
                out_port,
                out_vl,
                busy: false,
                arrived: t,
                ready,
            });
        } else {
            let b = q.back_mut().expect("body flit follows its head");
            debug_assert_eq!(b.pkt, ev.pkt);
            b.recv += ev.n;
        }
        self.occ[g * self.vls + ev.vl as usize] += ev.n as u32;
        debug_assert!(
            self.occ[g * self.vls + ev.vl as usize]
                <= self.orgs[self.ports[g].in_org as usize].max[ev.vl as usize],
            "buffer overflow"
        );
        self.buffered_total += ev.n as u64;
    }

    #[inline(never)]
    fn eject(&mut self, ev: &Event, t: u64, window: (u64, u64)) {
        let p = self.packets[ev.pkt as usize];
        self.flits_delivered += ev.n as u64;
        if t >= window.0 && t < window.1 {
            self.window_accepted[p.class as usize] += ev.n as u64;
        }
        if ev.flags & F_TAIL == 0 {
            return;
        }
        if p.measured {
            self.lat[p.class as usize].add(t - p.gen);
            self.net_lat[p.class as usize].add(t - p.inject);
            self.hops_sum += p.hops as u64;
            self.hops_n += 1;
            self.measured_outstanding -= 1;
        }
        if let Some(tr) = &mut self.trace {
            tr.push(Delivery {
                src: p.src,
                dst: p.dst,
                class: p.class,
                len: p.len,
                seq: p.seq,
                generated: p.gen,
                injected: p.inject,
                delivered: t,
                hops: p.hops,
            });
        }
        self.free_packets.push(ev.pkt);
    }

    #[inline(never)]
    fn generate(&mut self, t: u64, window: (u64, u64)) {
        let cbr = self.cfg.traffic.injection == InjectionKind::Cbr;
        while let Some(&Reverse((at, id))) = self.gen_heap.peek() {
            if at > t {
                break;
            }
            self.gen_heap.pop();
            let src = &mut self.sources[id as usize];
            let e = src.endpoint;
            let c = src.class as usize;
            let dst = self.pattern.draw(e, &mut src.rng);
            let next = if cbr {
                src.acc += src.period;
                (src.acc.floor() as u64).max(t + 1)
            } else {
                t + src.geometric_gap()
            };
            self.gen_heap.push(Reverse((next, id)));
            let size = self.cfg.traffic.classes[c].message_flits;
            self.enqueue_message(t, e, dst, c, size, window);
        }
        while let Some(&Reverse((at, _, e, dst, c, size))) = self.scripted.peek() {
            if at > t {
                break;
            }
            self.scripted.pop();
            self.enqueue_message(t, e, dst, c as usize, size, window);
        }
    }

    fn enqueue_message(
        &mut self,
        t: u64,
        e: u32,
        dst: u32,
        c: usize,
        size: u32,
        window: (u64, u64),
    ) {
        let measured = t >= window.0 && t < window.1;
        self.flits_generated += size as u64;
        if measured {
            self.window_generated[c] += size as u64;
            self.measured_outstanding += (size as u64).div_ceil(self.mtu[c] as u64);
        }
        let nic = &mut self.nics[e as usize];
        nic.skip = 0;
        nic.app[c].push_back(Msg {
            gen: t,
            dst,
            left: size,
            measured,
        });
        nic.app_msgs += 1;
    }

    fn alloc_packet(&mut self, p: Packet) -> u32 {
        match self.free_packets.pop() {
            Some(i) => {
                self.packets[i as usize] = p;
                i
            }
            None => {
                self.packets.push(p);
                (self.packets.len() - 1) as u32
            }
        }
    }

    #[inline(never)]
    fn step_nic(&mut self, e: usize, t: u64, window: (u64, u64)) {
        let classes = self.mtu.len();
        // 1. Application queues → NIC buffer (a queue per VL, `nic.buffer_flits` each), one
        // packet per class per round while they fit. A head that does not fit blocks its VL for
        // the rest of the refill, so small packets of another class cannot overtake it into
        // that VL and starve it. `skip` counts flits that must leave the NIC before any waiting
        // head can fit (0 = try now); a new message resets it.
        if self.nics[e].app_msgs > 0 && self.nics[e].skip == 0 {
            let mut blocked: u32 = 0;
            let mut shortfall = u32::MAX;
            loop {
                let mut moved = false;
                for k in 0..classes {
                    let nic = &self.nics[e];
                    let c = (nic.rr_class as usize + k) % classes;
                    let Some(msg) = nic.app[c].front() else {
                        continue;
                    };
                    let len = msg.left.min(self.mtu[c] as u32);
                    let dst = msg.dst;
                    let wire_sl = self
                        .fabric
                        .wire_sl(c as u8, e as u32, dst, self.n_endpoints);
                    let vl = self.nic_sl2vl[wire_sl as usize] as usize;
                    if blocked & (1 << vl) != 0 {
                        continue;
                    }
                    let free = self.nic_capacity - nic.vl_used[vl];
                    if len > free {
                        blocked |= 1 << vl;
                        shortfall = shortfall.min(len - free);
                        continue;
                    }
                    let nic = &mut self.nics[e];
                    let msg = nic.app[c].front_mut().unwrap();
                    let m = *msg;
                    msg.left -= len;
                    if msg.left == 0 {
                        nic.app[c].pop_front();
                        nic.app_msgs -= 1;
                    }
                    nic.used += len;
                    nic.vl_used[vl] += len;
                    let seq = nic.seq;
                    nic.seq += 1;
                    let id = self.alloc_packet(Packet {
                        src: e as u32,
                        dst: m.dst,
                        gen: m.gen,
                        inject: 0,
                        seq,
                        len: len as u16,
                        class: c as u8,
                        wire_sl,
                        hops: 0,
                        measured: m.measured,
                    });
                    self.nics[e].queues[vl].push_back(id);
                    moved = true;
                }
                let nic = &mut self.nics[e];
                nic.rr_class = ((nic.rr_class as usize + 1) % classes) as u8;
                if !moved || nic.app_msgs == 0 {
                    if nic.app_msgs > 0 && shortfall != u32::MAX {
                        nic.skip = shortfall;
                    }
                    break;
                }
            }
        }
        let g = self.nic_base as usize + e;
        // 2. Start a packet when the link is free.
        if self.nics[e].cur == NONE {
            let mut cands = std::mem::take(&mut self.cands);
            cands.clear();
            for v in 0..self.vls {
                if let Some(&p) = self.nics[e].queues[v].front() {
                    let pk = &self.packets[p as usize];
                    if self.can_start(g, v, pk.len as u32) {
                        cands.push(Candidate {
                            vl: v as u8,
                            sl: pk.class,
                        });
                    }
                }
            }
            let chosen = self.sched[g].choose(&cands);
            self.cands = cands;
            let Some(chosen) = chosen else { return };
            let v = chosen.vl;
            let p = self.nics[e].queues[v as usize].pop_front().unwrap();
            let len = self.packets[p as usize].len as u32;
            self.sched[g].sent(chosen, len);
            if self.switching == Switching::Vct {
                self.reserve(g, v as usize, len);
            }
            self.packets[p as usize].inject = t;
            let nic = &mut self.nics[e];
            nic.cur = p;
            nic.cur_sent = 0;
            nic.cur_vl = v;
        }
        // 3. Send up to `width` flits of the current packet.
        let (p, v, sent) = (
            self.nics[e].cur,
            self.nics[e].cur_vl as usize,
            self.nics[e].cur_sent,
        );
        let len = self.packets[p as usize].len;
        let info = self.ports[g];
        let mut n = (len - sent).min(info.width) as u32;
        if self.switching == Switching::Wormhole {
            n = self.credits_for(g, v, n);
            self.reserve(g, v, n);
        }
        if n == 0 {
            return;
        }
        let flags = EV_FLIT
            | if sent == 0 { F_HEAD } else { 0 }
            | if sent + n as u16 == len { F_TAIL } else { 0 };
        self.wheel.push(
            t + info.latency as u64,
            Event {
                target: info.peer,
                pkt: p,
                n: n as u16,
                vl: v as u8,
                flags,
            },
        );
        if t >= window.0 && t < window.1 {
            self.vl_flits[g * self.vls + v] += n as u64;
        }
        self.last_progress = t;
        let nic = &mut self.nics[e];
        nic.cur_sent += n as u16;
        nic.used -= n;
        nic.vl_used[v] -= n;
        nic.skip = nic.skip.saturating_sub(n);
        if nic.cur_sent == len {
            nic.cur = NONE;
        }
    }

    /// Separable input-first allocation for switch `s` (see the module docs).
    #[inline(never)]
    fn allocate(&mut self, s: usize, t: u64) {
        let vls = self.vls;
        let base = self.switches[s].base as usize;
        let np = self.switches[s].nports as usize;
        let vct = self.switching == Switching::Vct;
        let mut wake = NEVER;
        let mut credit_blocked = false;
        let mut reqs = std::mem::take(&mut self.reqs);
        reqs.clear();
        for ip in 0..np {
            let gi = base + ip;
            let max_conns = self.switches[s].max_conns;
            if self.in_conns[gi] >= max_conns {
                continue;
            }
            let waiting = self.waiting[gi];
            if waiting == 0 {
                continue;
            }
            // Visit waiting VLs in round-robin order: from `start` upwards, then the rest.
            let start = self.rr_in[gi].start(vls) as u32;
            let from_start = waiting & (u32::MAX << start);
            let mut chosen = false;
            for mut bits in [from_start, waiting & !from_start] {
                while bits != 0 {
                    let v = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let h = self.bufs[gi * vls + v]
                        .front()
                        .expect("waiting VL has a head");
                    debug_assert!(!h.busy);
                    if h.ready > t {
                        wake = wake.min(h.ready);
                        continue;
                    }
                    if chosen {
                        continue;
                    }
                    let go = base + h.out_port as usize;
                    if self.out_busy[go] {
                        continue;
                    }
                    let ov = h.out_vl as usize;
                    let ok = if self.ports[go].out_org != NO_ORG {
                        let need = if vct { (h.len - h.sent) as u32 } else { 1 };
                        self.ofits(go, ov, need)
                    } else {
                        self.can_start(go, ov, (h.len - h.sent) as u32)
                    };
                    if ok {
                        let class = self.packets[h.pkt as usize].class;
                        reqs.push((ip as u16, v as u8, h.out_port, h.out_vl, class));
                        chosen = true;
                    } else {
                        credit_blocked = true;
                    }
                }
            }
        }
        let mut lost = false;
        for i in 0..reqs.len() {
            let op = reqs[i].2;
            if op == u16::MAX {
                continue;
            }
            // All requests for this output, from index i on (earlier ones were other outputs).
            let mut cands = std::mem::take(&mut self.cands);
            cands.clear();
            for r in &reqs[i..] {
                let c = Candidate { vl: r.3, sl: r.4 };
                if r.2 == op && !cands.contains(&c) {
                    cands.push(c);
                }
            }
            let go = base + op as usize;
            let to_obuf = self.ports[go].out_org != NO_ORG;
            let chosen = if to_obuf {
                self.xsched[go].choose(&cands)
            } else {
                self.sched[go].choose(&cands)
            };
            self.cands = cands;
            let Some(chosen) = chosen else {
                // The scheduler lets none of them go now: try again next cycle.
                for r in reqs.iter_mut().skip(i) {
                    if r.2 == op {
                        r.2 = u16::MAX;
                    }
                }
                lost = true;
                continue;
            };
            let start = self.rr_out[go].start(np);
            let mut best: Option<usize> = None;
            let mut best_key = usize::MAX;
            for (j, r) in reqs.iter().enumerate().skip(i) {
                if r.2 == op && r.3 == chosen.vl && r.4 == chosen.sl {
                    let key = (r.0 as usize + np - start) % np;
                    if key < best_key {
                        best_key = key;
                        best = Some(j);
                    }
                }
            }
            let j = best.expect("a request for the chosen VL");
            let (ip, iv, _, ov, class) = reqs[j];
            for r in reqs.iter_mut().skip(i) {
                if r.2 == op {
                    if r.0 != ip {
                        lost = true;
                    }
                    r.2 = u16::MAX;
                }
            }
            let gi = base + ip as usize;
            let q = self.bufs[gi * vls + iv as usize].front_mut().unwrap();
            q.busy = true;
            self.waiting[gi] &= !(1u32 << iv);
            let pkt = q.pkt;
            let remaining = (q.len - q.sent) as u32;
            self.in_conns[gi] += 1;
            self.out_busy[go] = true;
            if to_obuf {
                if vct {
                    self.oreserve(go, ov as usize, remaining);
                }
            } else {
                if vct {
                    self.reserve(go, ov as usize, remaining);
                } else {
                    self.vl_owner[go * vls + ov as usize] = pkt;
                }
                self.sched[go].sent(Candidate { vl: ov, sl: class }, remaining);
            }
            self.rr_in[gi].grant(iv as usize);
            self.rr_out[go].grant(ip as usize);
            if self.ports[gi].hop {
                self.packets[pkt as usize].hops += 1;
            }
            self.switches[s].conns.push(Conn {
                in_g: gi as u32,
                out_g: go as u32,
                in_vl: iv,
                out_vl: ov,
            });
        }
        self.reqs = reqs;
        let sw = &mut self.switches[s];
        sw.wake_at = wake;
        sw.credit_blocked = credit_blocked;
        // A request that lost may win elsewhere next cycle: allocate again then.
        sw.dirty = lost;
    }

    /// Moves flits of every connection of switch `s`.
    #[inline(never)]
    fn advance(&mut self, s: usize, t: u64, window: (u64, u64)) {
        let vls = self.vls;
        let in_window = t >= window.0 && t < window.1;
        let mut i = 0;
        while i < self.switches[s].conns.len() {
            let c = self.switches[s].conns[i];
            let (gi, go) = (c.in_g as usize, c.out_g as usize);
            let bi = gi * vls + c.in_vl as usize;
            let h = *self.bufs[bi].front().unwrap();
            let out = self.ports[go];
            let to_obuf = out.out_org != NO_ORG;
            let oi = go * vls + c.out_vl as usize;
            let mut n = if to_obuf {
                (h.recv - h.sent).min(self.switches[s].speedup) as u32
            } else {
                (h.recv - h.sent).min(out.width) as u32
            };
            if self.switching == Switching::Wormhole && n > 0 {
                if to_obuf {
                    n = self.ocredits_for(go, c.out_vl as usize, n);
                    self.oreserve(go, c.out_vl as usize, n);
                } else {
                    n = self.credits_for(go, c.out_vl as usize, n);
                    self.reserve(go, c.out_vl as usize, n);
                }
            }
            if n == 0 {
                i += 1;
                continue;
            }
            let tail = h.sent as u32 + n == h.len as u32;
            if to_obuf {
                let q = &mut self.obufs[oi];
                if h.sent == 0 {
                    q.push_back(BufPkt {
                        recv: n as u16,
                        sent: 0,
                        busy: false,
                        ..h
                    });
                } else {
                    q.back_mut().expect("packet in output buffer").recv += n as u16;
                }
                self.o_waiting[go] |= 1 << c.out_vl;
                self.o_stalled[go] = false;
                self.switches[s].obuffered += n;
            } else {
                let flags =
                    EV_FLIT | if h.sent == 0 { F_HEAD } else { 0 } | if tail { F_TAIL } else { 0 };
                self.wheel.push(
                    t + out.latency as u64,
                    Event {
                        target: out.peer,
                        pkt: h.pkt,
                        n: n as u16,
                        vl: c.out_vl,
                        flags,
                    },
                );
                if in_window {
                    self.vl_flits[oi] += n as u64;
                }
                if out.to_switch {
                    self.flit_hops += n as u64;
                }
                self.buffered_total -= n as u64;
            }
            let inp = self.ports[gi];
            self.wheel.push(
                t + inp.latency as u64,
                Event {
                    target: inp.peer,
                    pkt: 0,
                    n: n as u16,
                    vl: c.in_vl,
                    flags: 0,
                },
            );
            self.occ[bi] -= n;
            self.last_progress = t;
            let sw = &mut self.switches[s];
            if tail {
                self.bufs[bi].pop_front();
                self.in_conns[gi] -= 1;
                self.out_busy[go] = false;
                if self.switching == Switching::Wormhole {
                    self.vl_owner[go * vls + c.out_vl as usize] = NONE;
                }
                sw.dirty = true;
                if let Some(nh) = self.bufs[bi].front_mut() {
                    self.waiting[gi] |= 1 << c.in_vl;
                    nh.ready = (nh.arrived + self.routing_delay).max(t + 1);
                    sw.wake_at = sw.wake_at.min(nh.ready);
                }
                sw.conns.swap_remove(i);
            } else {
                self.bufs[bi].front_mut().unwrap().sent += n as u16;
                i += 1;
            }
        }
    }

    /// Link stage of a combined input/output-queued switch: each output port sends from its
    /// output buffers, one packet at a time, choosing the VL with its scheduler among those
    /// whose head packet the next buffer can take.
    #[inline(never)]
    fn drain_outputs(&mut self, s: usize, t: u64, window: (u64, u64)) {
        let vls = self.vls;
        let base = self.switches[s].base as usize;
        let np = self.switches[s].nports as usize;
        let vct = self.switching == Switching::Vct;
        let in_window = t >= window.0 && t < window.1;
        for go in base..base + np {
            if self.o_waiting[go] == 0 || self.o_stalled[go] {
                continue;
            }
            if self.o_cur[go] == NO_VL {
                let mut cands = std::mem::take(&mut self.cands);
                cands.clear();
                let mut bits = self.o_waiting[go];
                while bits != 0 {
                    let v = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let h = self.obufs[go * vls + v].front().expect("waiting output VL");
                    let ok = self.can_start(go, v, (h.len - h.sent) as u32);
                    if ok {
                        cands.push(Candidate {
                            vl: v as u8,
                            sl: self.packets[h.pkt as usize].class,
                        });
                    }
                }
                self.o_stalled[go] = cands.is_empty();
                let chosen = self.sched[go].choose(&cands);
                self.cands = cands;
                let Some(chosen) = chosen else { continue };
                let v = chosen.vl;
                let h = *self.obufs[go * vls + v as usize].front().unwrap();
                let remaining = (h.len - h.sent) as u32;
                if vct {
                    self.reserve(go, v as usize, remaining);
                } else {
                    self.vl_owner[go * vls + v as usize] = h.pkt;
                }
                self.sched[go].sent(chosen, remaining);
                self.o_cur[go] = v;
            }
            let v = self.o_cur[go] as usize;
            let oi = go * vls + v;
            let h = *self.obufs[oi].front().unwrap();
            let out = self.ports[go];
            let mut n = (h.recv - h.sent).min(out.width) as u32;
            if !vct && n > 0 {
                n = self.credits_for(go, v, n);
                self.reserve(go, v, n);
            }
            if n == 0 {
                continue;
            }
            let tail = h.sent as u32 + n == h.len as u32;
            let flags =
                EV_FLIT | if h.sent == 0 { F_HEAD } else { 0 } | if tail { F_TAIL } else { 0 };
            self.wheel.push(
                t + out.latency as u64,
                Event {
                    target: out.peer,
                    pkt: h.pkt,
                    n: n as u16,
                    vl: v as u8,
                    flags,
                },
            );
            if in_window {
                self.vl_flits[oi] += n as u64;
            }
            if out.to_switch {
                self.flit_hops += n as u64;
            }
            self.orelease(go, v, n);
            self.buffered_total -= n as u64;
            self.last_progress = t;
            let sw = &mut self.switches[s];
            sw.obuffered -= n;
            // Space freed in an output buffer may admit a waiting packet.
            sw.dirty |= sw.credit_blocked;
            if tail {
                self.obufs[oi].pop_front();
                self.o_cur[go] = NO_VL;
                if !vct {
                    self.vl_owner[oi] = NONE;
                }
                if self.obufs[oi].is_empty() {
                    self.o_waiting[go] &= !(1u32 << v);
                }
            } else {
                self.obufs[oi].front_mut().unwrap().sent += n as u16;
            }
        }
    }

    /// Checks the flow-control invariants; returns the first violation. Run every 64 cycles in
    /// debug builds (so by every test), and available to callers.
    ///
    /// * a receiver VL never holds more than its maximum, nor a port more than its total;
    /// * a sender's outstanding count (`used`: flits sent or reserved, not yet credited) is never
    ///   below what the receiver holds in that VL, and never above the VL maximum;
    /// * output buffers stay within their capacity;
    /// * an input VL is marked waiting exactly when it has a head that is not forwarding.
    pub fn check_invariants(&self) -> Result<(), String> {
        let v = self.vls;
        for sw in &self.switches {
            for g in sw.base as usize..(sw.base + sw.nports as u32) as usize {
                let mut port_total = 0;
                for vl in 0..v {
                    let i = g * v + vl;
                    let occ = self.occ[i];
                    port_total += occ;
                    let org = &self.orgs[self.ports[g].in_org as usize];
                    if occ > org.max[vl] {
                        return Err(format!("port {g} VL {vl}: {occ} flits exceed the maximum"));
                    }
                    let queued: u32 = self.bufs[i].iter().map(|b| (b.recv - b.sent) as u32).sum();
                    if queued != occ {
                        return Err(format!(
                            "port {g} VL {vl}: occupancy {occ} != queued {queued}"
                        ));
                    }
                    let peer = self.ports[g].peer;
                    if peer != NONE {
                        let used = self.used[peer as usize * v + vl];
                        if used < occ || used > org.max[vl] {
                            return Err(format!(
                                "port {g} VL {vl}: sender counts {used}, receiver holds {occ}"
                            ));
                        }
                    }
                    let head_waits = self.bufs[i].front().is_some_and(|h| !h.busy);
                    if head_waits != (self.waiting[g] & (1 << vl) != 0) {
                        return Err(format!("port {g} VL {vl}: waiting mask out of date"));
                    }
                    let oorg = self.ports[g].out_org;
                    if oorg != NO_ORG && self.oused[i] > self.orgs[oorg as usize].max[vl] {
                        return Err(format!("port {g} VL {vl}: output buffer over capacity"));
                    }
                }
                let cap = self.orgs[self.ports[g].in_org as usize].total();
                if port_total > cap {
                    return Err(format!(
                        "port {g}: {port_total} flits exceed the port's {cap}"
                    ));
                }
            }
        }
        Ok(())
    }

    fn deadlock_report(&self, t: u64) -> DeadlockReport {
        let mut blocked = Vec::new();
        for sw in &self.switches {
            for ip in 0..sw.nports as usize {
                let g = sw.base as usize + ip;
                for v in 0..self.vls {
                    if let Some(h) = self.bufs[g * self.vls + v].front() {
                        let (s, p) = self.port_names[g];
                        blocked.push(BlockedBuffer {
                            switch: self.switch_names[s as usize].clone(),
                            in_port: p as u32,
                            vl: v as u32,
                            out_port: h.out_port as u32,
                            out_vl: h.out_vl as u32,
                            flits: self.occ[g * self.vls + v],
                        });
                    }
                }
            }
        }
        DeadlockReport {
            cycle: t,
            last_progress: self.last_progress,
            blocked,
        }
    }

    fn results(&mut self, t: u64, wall: f64, deadlock: Option<DeadlockReport>) -> RunResult {
        let n = self.n_endpoints as f64;
        let m = self.cfg.run.measure as f64;
        let mut lat_all = Histogram::default();
        let mut net_all = Histogram::default();
        for (a, b) in self.lat.iter().zip(&self.net_lat) {
            lat_all.merge(a);
            net_all.merge(b);
        }
        let total_acc: u64 = self.window_accepted.iter().sum();
        let total_gen: u64 = self.window_generated.iter().sum();
        let per_sl = self
            .cfg
            .traffic
            .classes
            .iter()
            .enumerate()
            .map(|(c, cc)| ClassResult {
                sl: c as u32,
                name: cc.name.clone(),
                offered_load: self.window_generated[c] as f64 / (m * n),
                accepted_load: self.window_accepted[c] as f64 / (m * n),
                share: if total_acc > 0 {
                    self.window_accepted[c] as f64 / total_acc as f64
                } else {
                    0.0
                },
                latency: self.lat[c].summary(),
                network_latency: self.net_lat[c].summary(),
            })
            .collect();
        let offered = total_gen as f64 / (m * n);
        let accepted = total_acc as f64 / (m * n);
        let drained = self.measured_outstanding == 0 && deadlock.is_none();
        let saturated = !drained || accepted < (1.0 - self.cfg.run.saturation_tolerance) * offered;
        // Remaining flits, counted from the state (independently of the delivery counters).
        let in_apps: u64 = self
            .nics
            .iter()
            .flat_map(|nic| nic.app.iter().flatten())
            .map(|m| m.left as u64)
            .sum();
        let in_nics: u64 = self.nics.iter().map(|nic| nic.used as u64).sum();
        let on_links: u64 = self
            .wheel
            .slots
            .iter()
            .flatten()
            .filter(|e| e.flags & EV_FLIT != 0)
            .map(|e| e.n as u64)
            .sum();
        let in_switches: u64 = self.occ.iter().map(|&x| x as u64).sum::<u64>()
            + self
                .obufs
                .iter()
                .flatten()
                .map(|b| (b.recv - b.sent) as u64)
                .sum::<u64>();
        let ports = if self.cfg.run.per_port_stats {
            (0..self.nic_base as usize)
                .filter(|&g| self.ports[g].peer != NONE)
                .map(|g| {
                    let (s, p) = self.display[g];
                    let vl_flits = self.vl_flits[g * self.vls..(g + 1) * self.vls].to_vec();
                    let total: u64 = vl_flits.iter().sum();
                    PortResult {
                        switch: self.display_names[s as usize].clone(),
                        port: p as u32,
                        to_endpoint: self.ports[g].to_endpoint,
                        vl_flits,
                        utilisation: total as f64 / (m * self.ports[g].width as f64),
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        RunResult {
            version: env!("CARGO_PKG_VERSION").to_string(),
            seed: self.cfg.seed,
            config_hash: self.config_hash.clone(),
            topology: self.topo_name.clone(),
            routing: self.routing_name.clone(),
            cycles: Cycles {
                warmup: self.cfg.run.warmup,
                measure: self.cfg.run.measure,
                total: t,
            },
            endpoints: self.n_endpoints as u64,
            offered_load: offered,
            accepted_load: accepted,
            saturated,
            drained,
            latency: lat_all.summary(),
            network_latency: net_all.summary(),
            hops_mean: if self.hops_n > 0 {
                self.hops_sum as f64 / self.hops_n as f64
            } else {
                0.0
            },
            flits: FlitCounts {
                generated: self.flits_generated,
                delivered: self.flits_delivered,
                remaining: in_apps + in_nics + on_links + in_switches,
            },
            per_sl,
            latency_histogram: self
                .lat
                .iter()
                .enumerate()
                .flat_map(|(c, h)| {
                    h.buckets()
                        .into_iter()
                        .map(move |(latency, count)| HistogramBin {
                            sl: c as u32,
                            latency,
                            count,
                        })
                })
                .collect(),
            ports,
            deadlock,
            cdg: None,
            performance: Performance {
                wall_seconds: wall,
                build_seconds: self.build_seconds,
                cycles_per_second: if wall > 0.0 { t as f64 / wall } else { 0.0 },
                flit_hops: self.flit_hops,
                flit_hops_per_second: if wall > 0.0 {
                    self.flit_hops as f64 / wall
                } else {
                    0.0
                },
            },
        }
    }
}

impl Source {
    /// Cycles to the next message of a Bernoulli process (≥ 1): geometric with parameter `p`.
    fn geometric_gap(&mut self) -> u64 {
        if self.p >= 1.0 {
            return 1;
        }
        let u: f64 = 1.0 - self.rng.gen::<f64>(); // (0, 1]
        1 + (u.ln() / self.ln_q).floor() as u64
    }
}
