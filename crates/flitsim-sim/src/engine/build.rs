//! [`Network::build`]: from a configuration, a topology and the manager's tables to the
//! engine's state. Every buffer and table is allocated here; `run` allocates nothing
//! proportional to the traffic.
use super::buffer::{BufferOrg, VlAccount, UNLIMITED};
use super::link::TimeWheel;
use super::nic::{FlowSource, MsgTag, Nic, Source, NO_ROUTE_ID};
use super::opa::{NodeKind, OpaLayout, PortRole};
use super::queue::{Discipline, VlQueue};
use super::route::{Organisation, RouteSource, SourceRoutes};
use super::switch::SwitchState;
use super::{Egress, Network, OutputBuffers, PortInfo};
use crate::config::{
    DTableAtomic, DeadlineStamp, FlowSpec, InjectionKind, ParamError, QosArchitecture,
    SchedulerConfig, SharedBufferConfig, SimParams, SwitchOrganisation, Switching, VlDiscipline,
};
use crate::ids::{PacketId, PortIdx, Vl, NEVER};
use crate::scheduler::OutputScheduler;
use crate::stats::collector::Collector;
use crate::traffic::{stream, Pattern, StreamKind};
use crate::workload::{Arrivals, SimpleProcess};
use crate::SimError;
use flitsim_manager::FabricConfig;
use flitsim_topology::{EndpointId, NodeId, PortNum, SwitchId, Topology};
use rand::Rng;
use std::collections::BinaryHeap;

/// The buffer organisations of a switch, each with the configuration key that set it (for
/// error messages).
struct Buffers {
    /// Input buffers of every switch: `in_orgs[0]`; the Omni-Path central and staging buffers
    /// follow when configured.
    in_orgs: Vec<(String, BufferOrg)>,
    /// Output buffers, when configured.
    out: Option<(String, BufferOrg)>,
}

/// Indexes into `Buffers::in_orgs`.
const INPUT: u8 = 0;
const CENTRAL: u8 = 1;
const STAGING: u8 = 2;

fn err(m: String) -> SimError {
    SimError::Build(m)
}

/// Each class's MTU in flits (its message size when no MTU is given).
pub(crate) fn class_mtus(cfg: &SimParams) -> Vec<u16> {
    cfg.traffic
        .classes
        .iter()
        .map(|c| {
            let max = c.max_message_flits().unwrap_or(u32::MAX);
            c.mtu_flits.unwrap_or(max).min(max).min(u16::MAX as u32) as u16
        })
        .collect()
}

/// The buffer organisations the configuration asks for, checked against the largest MTU.
/// The checks of [`buffers`] without the topology: every buffer holds a flit per VL, and a
/// whole packet of the largest MTU under virtual cut-through.
pub(crate) fn check_buffers(cfg: &SimParams, vls: usize) -> Result<(), ParamError> {
    let max_mtu = class_mtus(cfg).into_iter().max().unwrap_or(0) as u32;
    buffers(cfg, vls, max_mtu).map(|_| ())
}

fn buffers(cfg: &SimParams, vls: usize, max_mtu: u32) -> Result<Buffers, ParamError> {
    let sw = &cfg.switch;
    let mut in_orgs: Vec<(String, BufferOrg)> = vec![match &sw.shared_buffer {
        None => (
            "switch.vl_buffer_flits".into(),
            BufferOrg::fixed(vls, sw.vl_buffer_flits),
        ),
        Some(sb) => ("switch.shared_buffer".into(), BufferOrg::shared(vls, sb)),
    }];
    let out = match (&sw.shared_output_buffer, sw.output_buffer_flits) {
        (Some(sb), _) => Some((
            "switch.shared_output_buffer".into(),
            BufferOrg::shared(vls, sb),
        )),
        (None, 0) => None,
        (None, ob) => Some((
            "switch.output_buffer_flits".into(),
            BufferOrg::fixed(vls, ob),
        )),
    };
    if sw.organisation == SwitchOrganisation::Opa {
        if out.is_none() {
            return Err(ParamError::new(
                "switch.organisation",
                "\"opa\" needs output buffers: set switch.shared_output_buffer or switch.output_buffer_flits",
            ));
        }
        let o = &sw.opa;
        let per_link = o.central_buffer_flits / o.mport_links;
        if o.central_min_per_vl * vls as u32 > per_link || o.central_min_per_vl > per_link {
            return Err(ParamError::new(
                "switch.opa.central_buffer_flits",
                format!(
                    "{} flits: each of the {} links' share ({per_link} flits) must hold central_min_per_vl = {} flits for each of {vls} VLs",
                    o.central_buffer_flits, o.mport_links, o.central_min_per_vl
                ),
            ));
        }
        let central_max = o.central_max_per_vl.unwrap_or(per_link);
        if central_max < o.central_min_per_vl || central_max > per_link {
            return Err(ParamError::new(
                "switch.opa.central_max_per_vl",
                format!(
                    "{central_max} flits: must be in central_min_per_vl ({})..= a link's share of the central buffer ({per_link})",
                    o.central_min_per_vl
                ),
            ));
        }
        let central = SharedBufferConfig {
            total_flits: per_link,
            min_per_vl: o.central_min_per_vl,
            max_per_vl: central_max,
        };
        in_orgs.push((
            "switch.opa.central_buffer_flits".into(),
            BufferOrg::shared(vls, &central),
        ));
        in_orgs.push((
            "switch.opa.central_output_flits".into(),
            BufferOrg::fixed(vls, o.central_output_flits),
        ));
    }
    let vct = sw.switching == Switching::Vct;
    for (key, org) in in_orgs.iter().chain(out.iter()) {
        let cap = org.vl_cap();
        if cap == 0 {
            return Err(ParamError::new(
                key.as_str(),
                "buffers must hold at least one flit per VL",
            ));
        }
        if vct && cap < max_mtu {
            return Err(ParamError::new(
                key.as_str(),
                format!(
                    "a VL can hold at most {cap} flits, smaller than the largest MTU ({max_mtu} flits); \
                     virtual cut-through needs room for a whole packet"
                ),
            ));
        }
    }
    Ok(Buffers { in_orgs, out })
}

impl Network {
    /// Builds the network: checks the tables against the topology, allocates every buffer,
    /// and sets up the traffic sources. Fails with a message naming the offending key.
    pub fn build(
        cfg: &SimParams,
        topo: &Topology,
        fabric: FabricConfig,
    ) -> Result<Network, SimError> {
        let started = std::time::Instant::now();
        fabric.check_shape(topo).map_err(|e| err(e.to_string()))?;
        let mut fabric = fabric;
        let mgmt_vl = match cfg.traffic.management_class() {
            Some(m) => Some(add_management_vl(&mut fabric, m).map_err(err)?),
            None => None,
        };
        let vls = fabric.num_vls as usize;
        if vls > 32 {
            return Err(err(format!("{vls} VLs: at most 32 are supported")));
        }
        let classes = cfg.traffic.classes.len();
        let n = topo.num_endpoints();
        if n == 0 {
            return Err(err("the topology has no endpoints".into()));
        }
        let mtu = class_mtus(cfg);
        let max_mtu = *mtu.iter().max().unwrap() as u32;
        let buffers = buffers(cfg, vls, max_mtu).map_err(|e| err(e.to_string()))?;
        let organisation = match (cfg.switch.organisation, &buffers.out) {
            (SwitchOrganisation::Crossbar, None) => Organisation::InputQueued,
            (SwitchOrganisation::Crossbar, Some(_)) => Organisation::InputOutputQueued,
            (SwitchOrganisation::Opa, _) => Organisation::OmniPath(Box::new(
                OpaLayout::build(topo, &cfg.switch.opa).map_err(err)?,
            )),
        };
        let nic_org = match &cfg.nic.shared_buffer {
            None => BufferOrg::fixed(vls, cfg.nic.buffer_flits),
            Some(sb) => {
                if sb.max_per_vl < sb.min_per_vl
                    || sb.max_per_vl > sb.total_flits
                    || sb.min_per_vl as u64 * vls as u64 > sb.total_flits as u64
                {
                    return Err(err(format!(
                        "nic.shared_buffer: need min_per_vl ≤ max_per_vl ≤ total_flits and \
                         {vls} VLs · min_per_vl ≤ total_flits (got {}, {}, {})",
                        sb.min_per_vl, sb.max_per_vl, sb.total_flits
                    )));
                }
                BufferOrg::shared(vls, sb)
            }
        };
        if cfg.nic.shared_buffer.is_none() && cfg.nic.buffer_flits < max_mtu {
            return Err(err(format!(
                "nic.buffer_flits: {} flits is smaller than the largest MTU ({max_mtu} flits)",
                cfg.nic.buffer_flits
            )));
        }
        if cfg.nic.shared_buffer.is_some() && nic_org.vl_cap() < max_mtu {
            return Err(err(format!(
                "nic.shared_buffer: a VL can hold {} flits, smaller than the largest MTU ({max_mtu} flits)",
                nic_org.vl_cap()
            )));
        }
        // Every destination must be reachable from every switch without loops.
        fabric.check_routes(topo).map_err(|e| err(e.to_string()))?;
        // The engine simulates the expanded network when switches are hierarchical.
        let layout = organisation.opa();
        let etopo = layout.map(|l| &l.topo).unwrap_or(topo);
        let nsp = etopo.total_switch_ports();
        let g_total = nsp + n;
        let nic_base = nsp as u32;
        let gidx = |r: flitsim_topology::PortRef| -> PortIdx {
            PortIdx(match r.node {
                NodeId::Switch(s) => etopo.port_index(SwitchId(s), r.port) as u32,
                NodeId::Endpoint(e) => nic_base + e,
            })
        };
        let mut ports = vec![PortInfo::new(INPUT, cfg.switch.routing_delay); g_total];
        let mut port_names = vec![(0u32, 0 as PortNum); g_total];
        let mut display = vec![(0u32, 0 as PortNum); g_total];
        let mut display_names: Vec<String> =
            topo.switches().iter().map(|s| s.name.clone()).collect();
        let mut switches = Vec::with_capacity(etopo.num_switches());
        let mut internal_port = vec![false; g_total];
        let buffered_out = buffers.out.is_some();
        for s in 0..etopo.num_switches() as u32 {
            let np = etopo.num_ports(SwitchId(s));
            let base = etopo.port_index(SwitchId(s), 0) as u32;
            let name_idx = match layout {
                None => s,
                Some(_) => {
                    display_names.push(etopo.switches()[s as usize].name.clone());
                    (display_names.len() - 1) as u32
                }
            };
            for p in 0..np {
                let g = (base + p as u32) as usize;
                port_names[g] = (s, p);
                let role = layout.map(|l| l.role(s, p)).unwrap_or(PortRole::External);
                display[g] = match (layout, role) {
                    (Some(l), PortRole::External) => l.fabric_port(s, p),
                    _ => (name_idx, p),
                };
                let info = &mut ports[g];
                let (in_org, egress) = match role {
                    PortRole::External if buffered_out => (INPUT, Egress::OutputBuffer),
                    PortRole::External => (INPUT, Egress::Link),
                    PortRole::Up => (CENTRAL, Egress::Link),
                    PortRole::Down => (STAGING, Egress::Link),
                };
                info.in_org = in_org;
                info.set_egress(egress);
                internal_port[g] = role != PortRole::External;
                if role != PortRole::External {
                    info.delay = cfg
                        .switch
                        .opa
                        .internal_routing_delay
                        .unwrap_or(cfg.switch.routing_delay);
                }
                info.set_hop(role == PortRole::External);
                if let Some(peer) = etopo.switch_peer(SwitchId(s), p) {
                    let l = etopo.links()[peer.link as usize];
                    let inside = layout.is_some_and(|lay| lay.internal[peer.link as usize]);
                    info.peer = gidx(peer.remote);
                    info.latency = l.latency;
                    info.width = l.width.min(u16::MAX as u32) as u16;
                    info.set_to_endpoint(matches!(peer.remote.node, NodeId::Endpoint(_)));
                    info.set_to_switch(!inside && matches!(peer.remote.node, NodeId::Switch(_)));
                }
            }
            // With output buffers an input holds one crossbar connection at a time (one per
            // VL with a non-multiplexed crossbar).
            let (max_conns, speedup) = match layout {
                None => (
                    if cfg.switch.crossbar == crate::config::Crossbar::PerVl {
                        vls as u8
                    } else if buffered_out {
                        1
                    } else {
                        cfg.switch.speedup.min(255) as u8
                    },
                    cfg.switch.speedup.min(u16::MAX as u32) as u16,
                ),
                Some(l) => match l.node[s as usize].1 {
                    NodeKind::MPort(_) => (
                        1,
                        cfg.switch.opa.mport_link_width.min(u16::MAX as u32) as u16,
                    ),
                    NodeKind::Central => (1, 1),
                },
            };
            switches.push(SwitchState {
                base,
                nports: np,
                max_conns,
                speedup,
                conns: Default::default(),
                obuffered: 0,
                dirty: false,
                credit_blocked: false,
                settled: false,
                in_waiting: 0,
                out_ready: 0,
                wake_at: NEVER,
                slept: super::switch::AWAKE,
                wake_event: super::switch::AWAKE,
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
        // The sender's view of each link's receiver: the peer's input buffer, or nothing to
        // count when the peer is an endpoint — unless the endpoint's processor must take each
        // packet (`nic.receive_time`): then its receive buffer, organised as the NIC buffer.
        let in_orgs: Vec<BufferOrg> = buffers.in_orgs.into_iter().map(|(_, o)| o).collect();
        let nic_receive = cfg.nic.rate_control && cfg.nic.receive_time > 0;
        let mut credit_orgs = in_orgs.clone();
        let to_nic = if nic_receive {
            credit_orgs.push(nic_org.clone());
            (credit_orgs.len() - 1) as u8
        } else {
            UNLIMITED
        };
        let tx_org: Vec<u8> = ports
            .iter()
            .map(|p| {
                if p.to_endpoint() {
                    to_nic
                } else if p.peer == PortIdx::NONE {
                    INPUT
                } else {
                    ports[p.peer.idx()].in_org
                }
            })
            .collect();
        let credits = VlAccount::new(vls, tx_org, credit_orgs);
        let disciplines = vl_disciplines(cfg, vls).map_err(err)?;
        let prio_inputs = cfg.qos.architecture.is_some();
        let fifo_arbiter = cfg.switch.arbiter == crate::config::Arbiter::Fifo;
        let per_vl_crossbar = cfg.switch.crossbar == crate::config::Crossbar::PerVl;
        let queues = |n: usize| -> Vec<VlQueue> {
            (0..n * vls)
                .map(|i| VlQueue::new(disciplines[i % vls]))
                .collect()
        };
        let obuf = match buffers.out {
            // No output buffers: every per-port vector stays empty.
            None => OutputBuffers::default(),
            Some((_, org)) => OutputBuffers {
                queues: queues(g_total),
                account: VlAccount::new(
                    vls,
                    ports
                        .iter()
                        .map(|p| match p.egress() {
                            Egress::OutputBuffer => 0,
                            Egress::Link => UNLIMITED,
                        })
                        .collect(),
                    vec![org],
                ),
                waiting: vec![0; g_total],
                cur: vec![Vl::NONE; g_total],
                stalled: vec![false; g_total],
                xsched: vec![
                    with_management(
                        if prio_inputs {
                            OutputScheduler::StrictPriority {
                                order: (0..vls as u8).collect(),
                            }
                        } else {
                            OutputScheduler::RoundRobin {
                                last: vls as u8 - 1,
                                vls: vls as u8,
                            }
                        },
                        mgmt_vl
                    );
                    g_total
                ],
            },
        };
        let (sched, atomic, mtu_room) = schedulers(cfg, &mtu, vls, nsp, &internal_port, mgmt_vl)?;
        let (unit, sub_packet) = units(cfg, &mtu, atomic);
        let pattern = Pattern::build(
            cfg.traffic.pattern,
            cfg.traffic.hotspot.as_ref(),
            topo,
            cfg.seed,
        )
        .map_err(err)?;
        cfg.traffic
            .validate_endpoints(n)
            .map_err(|e| err(e.to_string()))?;
        let flows = cfg.traffic.expand_flows(n, cfg.seed);
        let mut routes = if cfg.switch.source_routing {
            RouteSource::SourceRoute(SourceRoutes::new(topo))
        } else {
            RouteSource::tables(&mut fabric)
        };
        let mut flow_routes = Vec::with_capacity(flows.len());
        for (i, f) in flows.iter().enumerate() {
            let key = format!("traffic.flow[{i}]");
            if f.path as usize >= fabric.num_paths() {
                let k = fabric.num_paths();
                return Err(err(format!(
                    "{key}.path: {}: the fabric offers {k} path{} per destination (0..={})",
                    f.path,
                    if k == 1 { "" } else { "s" },
                    k - 1
                )));
            }
            flow_routes.push(match (&f.route, &mut routes) {
                (Some(ports), RouteSource::SourceRoute(r)) => r
                    .explicit(topo, f.src, f.dst, ports)
                    .map_err(|m| err(format!("{key}.route: {m}")))?,
                (Some(_), _) => {
                    return Err(err(format!(
                        "{key}.route: an explicit route needs switch.source_routing = true"
                    )))
                }
                (None, _) => NO_ROUTE_ID,
            });
        }
        let (sources, gen_calendar) = sources(cfg, n, &flows, &flow_routes);
        // Rate control: per NIC, one controlled flow per class (its own traffic), then the
        // NIC's flows in id order.
        let app_lanes = if cfg.nic.send_queues == crate::config::SendQueues::Vl {
            if cfg.nic.rate_control || cfg.qos.architecture.is_some() {
                return Err(err(
                    "nic.send_queues: \"vl\" orders the class queues; rate control \
                     (nic.rate_control) and deadline QoS (qos.architecture) keep queues of their \
                     own: drop one of them"
                        .to_string(),
                ));
            }
            vls
        } else {
            1
        };
        let mut nics: Vec<Nic> = (0..n).map(|_| Nic::new(classes, app_lanes, vls)).collect();
        let mut flow_local = vec![0u32; flows.len()];
        let dl = super::deadline::DeadlineState::new(cfg, switches.len(), n, vls);
        if fifo_arbiter && dl.as_ref().is_some_and(|d| d.edf) {
            return Err(err(
                "switch.arbiter: \"fifo\" and deadline arbitration (qos.architecture) both \
                 order the requests; drop one of them"
                    .to_string(),
            ));
        }
        if dl.as_ref().is_some_and(|d| d.edf) {
            let rules = stamp_rules(cfg).map_err(err)?;
            let mut local: Vec<Vec<super::deadline::StampRule>> = vec![rules.clone(); n];
            for (i, f) in flows.iter().enumerate() {
                let l = &mut local[f.src as usize];
                flow_local[i] = (l.len() - classes) as u32;
                let mut r = rules[f.class as usize];
                if r.stamp == DeadlineStamp::Rate
                    && cfg.qos.classes[f.class as usize].bandwidth.is_none()
                    && f.rate > 0.0
                {
                    r.step = 1.0 / f.rate;
                }
                l.push(r);
            }
            for (nic, l) in nics.iter_mut().zip(local) {
                nic.edf = Some(Box::new(super::deadline::HostEdf::new(l)));
            }
        }
        let buckets = match cfg.qos.architecture {
            None | Some(QosArchitecture::Traditional4vc) => true,
            Some(_) => false,
        };
        if buckets && cfg.qos.classes.iter().any(|q| q.bucket_rate.is_some()) {
            for nic in &mut nics {
                let full = (0..classes)
                    .map(|c| {
                        let depth = cfg.qos.classes.get(c).and_then(|q| q.bucket_depth);
                        (depth.unwrap_or(mtu[c] as u32) as f64, 0)
                    })
                    .collect();
                nic.buckets = Some(full);
            }
        }
        if cfg.nic.rate_control {
            let t_min = cfg.nic.dispatch_time.max(1);
            let mut local: Vec<Vec<(u8, f64)>> = (0..n)
                .map(|_| (0..classes as u8).map(|c| (c, t_min as f64)).collect())
                .collect();
            for (i, f) in flows.iter().enumerate() {
                let l = &mut local[f.src as usize];
                flow_local[i] = l.len() as u32;
                l.push((f.class, f.idt.unwrap_or(t_min as f64)));
            }
            for (nic, l) in nics.iter_mut().zip(local) {
                let mut rc = super::rate::NicRate::new(l, t_min);
                rc.receive_time = cfg.nic.receive_time;
                nic.rate = Some(Box::new(rc));
            }
        }
        let replay = match &cfg.traffic.trace {
            None => None,
            Some(tc) => {
                let program = tc.program.clone().ok_or_else(|| {
                    err(format!(
                        "traffic.trace.path: {:?}: the trace has not been read",
                        tc.path
                    ))
                })?;
                let endpoints = tc.endpoints(n, cfg.seed).map_err(|e| err(e.to_string()))?;
                Some(Box::new(
                    crate::replay::Replay::new(program, endpoints, tc.flit_bytes)
                        .map_err(|e| err(format!("traffic.trace.path: {e}")))?,
                ))
            }
        };
        let nic_buf = VlAccount::new(vls, vec![0; n], vec![nic_org]);
        let wheel = TimeWheel::new(etopo.max_latency());
        let nic_sl2vl = fabric.nic_sl2vl.clone();
        let mut net = Network {
            cfg: cfg.clone(),
            topo_name: topo.name().to_string(),
            routing_name: fabric.engine.clone(),
            vls,
            switching: cfg.switch.switching,
            n_endpoints: n,
            nic_base,
            ports,
            port_names,
            switch_names: etopo.switches().iter().map(|s| s.name.clone()).collect(),
            display,
            display_names,
            organisation,
            routes,
            sl2vl: super::route::Sl2VlTables::new(&fabric),
            fabric,
            wheel,
            credits,
            vl_owner: vec![PacketId::NONE; g_total * vls],
            sched,
            inputs: queues(g_total),
            in_orgs,
            xbar: vec![super::XbarPort::default(); g_total],
            obuf,
            lanes: Vec::new(),
            phase_cuts: Default::default(),
            balance_phases: 0,
            balance_every: super::lane::BALANCE_FIRST,
            lane_weight: Vec::new(),
            switches,
            nic_pending: vec![0; n.div_ceil(64)],
            nics,
            nic_receive,
            eject_trains: false,
            rx_train: Vec::new(),
            flow_local,
            idt_schedule: Vec::new(),
            idt_next: 0,
            nic_buf,
            nic_sl2vl,
            mtu,
            unit,
            sub_packet,
            sources,
            gen_calendar,
            scripted: BinaryHeap::new(),
            replay,
            replay_pending: Vec::new(),
            pattern,
            packets: Default::default(),
            buffered_total: 0,
            measured_outstanding: 0,
            messages: Default::default(),
            last_progress: 0,
            // Flits per (port, VL) only feed the `ports` table.
            counters: Collector::new(
                classes,
                if cfg.run.per_port_stats {
                    g_total * vls
                } else {
                    0
                },
                cfg.run.timeseries_bin,
                &flows,
            ),
            build_seconds: 0.0,
            check_every: cfg
                .run
                .check_invariants
                .unwrap_or(if cfg!(debug_assertions) { 64 } else { 0 }),
            cpu_seconds: None,
            prefetch_queues: false,
            look_ahead: false,
            look_further: false,
            trains: false,
            credit_trains: false,
            credits_until: 0,
            streams_until: 0,
            mtu_room,
            shuffle: None,
            dl: dl.map(Box::new),
            prio_inputs,
            mgmt_vl,
            fifo_arbiter,
            per_vl_crossbar,
            app_lanes,
        };
        if let (true, Some(bin)) = (cfg.run.port_timeseries, cfg.run.timeseries_bin) {
            net.counters.port_ts_ports = nic_base as usize;
            net.counters.occ_switches = net.switches.len();
            net.counters.occ_every = (bin / 8).max(1);
        }
        let forced = super::lane::FORCED_LOOK_AHEAD.load(std::sync::atomic::Ordering::Relaxed);
        let queue_bytes = net.inputs.len() * std::mem::size_of::<VlQueue>();
        net.prefetch_queues = forced || queue_bytes > super::PREFETCH_ABOVE;
        net.look_ahead = net.prefetch_queues && net.obuf.queues.is_empty();
        net.look_further = net.look_ahead && (forced || queue_bytes > super::LOOK_FURTHER_ABOVE);
        net.trains = net.switching == Switching::Vct
            && !net.per_vl_crossbar
            && net.dl.is_none()
            && net.obuf.queues.is_empty();
        // Credit trains are counted where they are read; a shared pool's count is kept as
        // flits come and go, so ports with one return credits one by one.
        // (and a DTable that keeps MTUs together asks for more room than the head's own, which
        // the wake-up on room does not know: credits return one by one there too).
        net.credit_trains = net.trains && net.credits.no_shared_pool() && !net.mtu_room;
        if net.credit_trains {
            net.credits.enable_trains();
        }
        net.eject_trains = net.trains && !net.nic_receive && net.sub_packet == 0;
        if net.eject_trains {
            net.rx_train = vec![(PacketId::NONE, 0); net.nics.len()];
        }
        // Deadline-based QoS keeps one lane (its clocks and counters are not split).
        let threads = match (cfg.run.threads, net.dl.is_some()) {
            (Some(0), _) => return Err(err("run.threads: must be at least 1".into())),
            (_, true) => 1,
            (Some(n), false) => n as usize,
            (None, false) => super::lane::default_threads(nic_base as usize),
        };
        net.set_lanes(threads).map_err(err)?;
        net.build_seconds = started.elapsed().as_secs_f64();
        Ok(net)
    }
}

/// The queue discipline of each VL: `switch.vl_discipline`, or the architecture's (ordered +
/// take-over in the regulated VC of `advanced_2vc`, heaps everywhere under `ideal`).
fn vl_disciplines(cfg: &SimParams, vls: usize) -> Result<Vec<Discipline>, String> {
    let of = |d: VlDiscipline| match d {
        VlDiscipline::Fifo => Discipline::Fifo,
        VlDiscipline::OrderedTakeover => Discipline::OrderedTakeover,
        VlDiscipline::Heap => Discipline::Heap,
    };
    let Some(a) = cfg.qos.architecture else {
        return Ok(vec![of(cfg.switch.vl_discipline); vls]);
    };
    if !cfg.switch.vl_discipline.is_fifo() {
        return Err(format!(
            "switch.vl_discipline: set by qos.architecture = \"{}\"; drop one of them",
            a.name()
        ));
    }
    let vcs = a.vcs(cfg.traffic.classes.len());
    let lanes = (vls / vcs).max(1);
    Ok((0..vls)
        .map(|v| match a {
            QosArchitecture::Ideal => Discipline::Heap,
            QosArchitecture::Advanced2vc if v < lanes => Discipline::OrderedTakeover,
            _ => Discipline::Fifo,
        })
        .collect())
}

/// Per class, how EDF hosts stamp its packets (`[[qos.class]]`). Errors name the key.
fn stamp_rules(cfg: &SimParams) -> Result<Vec<super::deadline::StampRule>, String> {
    let classes = cfg.traffic.classes.len();
    if cfg.qos.classes.len() != classes {
        return Err(format!(
            "qos.class: {} entries for {classes} traffic classes (deadline stamping needs one \
             [[qos.class]] per class, in class order)",
            cfg.qos.classes.len()
        ));
    }
    cfg.qos
        .classes
        .iter()
        .enumerate()
        .map(|(c, q)| {
            let key = format!("qos.class[{c}]");
            let step = match q.stamp {
                DeadlineStamp::Link => 1.0,
                DeadlineStamp::Rate => {
                    let bw = q.bandwidth.unwrap_or_else(|| cfg.traffic.class_rate(c));
                    if !(bw.is_finite() && bw > 0.0) {
                        if q.bandwidth.is_some() || cfg.traffic.flows.is_empty() {
                            return Err(format!(
                                "{key}.bandwidth: {bw}: stamp = \"rate\" needs a positive \
                                 bandwidth (flits/cycle), given or from the class's rate"
                            ));
                        }
                        // A class carried only by flows: each flow stamps with its own rate.
                        1.0
                    } else {
                        1.0 / bw
                    }
                }
                DeadlineStamp::Frame => match q.frame_latency {
                    Some(l) if l > 0 => l as f64,
                    _ => {
                        return Err(format!(
                            "{key}.frame_latency: stamp = \"frame\" needs a frame latency of \
                             at least 1 cycle"
                        ))
                    }
                },
            };
            Ok(super::deadline::StampRule {
                stamp: q.stamp,
                step,
                regulated: q.regulated,
                eligible: q.eligible,
            })
        })
        .collect()
}

/// Per class, the unit the NIC cuts messages into, and the packet size inside a unit (0 when
/// every unit is one packet). Without `traffic.packet_flits` a unit is a packet of at most the
/// MTU. With it, a unit is a packet of `packet_flits` (at most the MTU) — unless a DTable
/// keeps messages together along the whole path (`atomic`, `qos.dtable.atomic = "path"`):
/// then the engine moves the message as one unit through every stage and counts the packets
/// inside it at the destination. (With `atomic = "link"` the engine moves packets and the
/// DTable ports keep each MTU's packets together on their links: see
/// [`OutputScheduler::room_needed`].)
fn units(cfg: &SimParams, mtu: &[u16], atomic: bool) -> (Vec<u16>, u16) {
    let pf = cfg.traffic.packet_flits.min(u16::MAX as u32) as u16;
    if pf == 0 || atomic {
        return (mtu.to_vec(), if atomic { pf } else { 0 });
    }
    (mtu.iter().map(|&m| m.min(pf)).collect(), 0)
}

/// `s`, with absolute priority for the management VL when there is one.
fn with_management(s: OutputScheduler, mgmt_vl: Option<u8>) -> OutputScheduler {
    match mgmt_vl {
        Some(vl) => s.with_management(vl),
        None => s,
    }
}

/// Adds the management VL (InfiniBand VL15, Omni-Path SC15) above the data VLs and maps
/// every wire SL of management class `class` onto it, at the NICs and on every switch hop;
/// the forwarding tables stay those of the data. Returns the VL.
fn add_management_vl(fabric: &mut FabricConfig, class: usize) -> Result<u8, String> {
    let key = format!("traffic.class[{class}].management");
    let vl = fabric.num_vls;
    if vl >= 32 {
        return Err(format!(
            "{key}: the data classes use {vl} VLs and the management VL would make {}; at \
             most 32 are supported",
            vl as u32 + 1
        ));
    }
    if class >= fabric.classes as usize {
        return Err(format!(
            "{key}: the routing tables were built for {} classes; the management class is \
             class {class}",
            fabric.classes
        ));
    }
    let rsl = fabric.routing_sls as usize;
    let wire_sls = fabric.wire_sls();
    let ours = |w: usize| w / rsl == class;
    for table in &mut fabric.sl2vl {
        for (i, v) in table.iter_mut().enumerate() {
            if ours(i % wire_sls) {
                *v = vl;
            }
        }
    }
    for (w, v) in fabric.nic_sl2vl.iter_mut().enumerate() {
        if ours(w) {
            *v = vl;
        }
    }
    fabric.num_vls += 1;
    Ok(vl)
}

/// The output scheduler of every port: the configured switch scheduler on fabric ports, the
/// NIC scheduler on NIC ports, round robin on the Omni-Path switch's internal ports; whether
/// a DTable moves whole messages along the path; and whether one keeps MTUs together over
/// packets on its links.
fn schedulers(
    cfg: &SimParams,
    mtu: &[u16],
    vls: usize,
    nsp: usize,
    internal_port: &[bool],
    mgmt_vl: Option<u8>,
) -> Result<(Vec<OutputScheduler>, bool, bool), SimError> {
    let mtu_flits: Vec<u32> = mtu.iter().map(|&m| m as u32).collect();
    let mut port_scheds = crate::qos::resolve(cfg, &mtu_flits).map_err(err)?;
    if cfg.qos.architecture.is_some() {
        // VCs in priority order, VC-major over the routing lanes: ascending VLs.
        let order = (0..vls as u8).collect::<Vec<_>>();
        port_scheds.switch = SchedulerConfig::StrictPriority {
            order: order.clone(),
        };
        port_scheds.nic = SchedulerConfig::StrictPriority { order };
    }
    let switch_sched = OutputScheduler::new(&port_scheds.switch, vls as u8, &mtu_flits)
        .map_err(|m| err(format!("switch scheduler: {m}")))?;
    let nic_sched = OutputScheduler::new(&port_scheds.nic, vls as u8, &mtu_flits)
        .map_err(|m| err(format!("NIC scheduler: {m}")))?;
    let internal_sched = OutputScheduler::new(&SchedulerConfig::RoundRobin, vls as u8, &mtu_flits)
        .map_err(|m| err(format!("internal scheduler: {m}")))?;
    // DTable keeps an SL's message together: along the whole path (the engine moves the
    // message as one unit), or on every link it schedules (the engine moves packets, and the
    // DTable ports send an MTU's packets back to back).
    let path_atomic = |c: &SchedulerConfig| {
        matches!(
            c,
            SchedulerConfig::Dtable {
                atomic: DTableAtomic::Path,
                ..
            }
        )
    };
    let atomic = path_atomic(&port_scheds.switch) || path_atomic(&port_scheds.nic);
    let mtu_room = cfg.traffic.packet_flits > 0
        && !atomic
        && (switch_sched.is_dtable() || nic_sched.is_dtable());
    let (switch_sched, nic_sched) = if mtu_room {
        (switch_sched.with_packets(), nic_sched.with_packets())
    } else {
        (switch_sched, nic_sched)
    };
    let switch_sched = with_management(switch_sched, mgmt_vl);
    let nic_sched = with_management(nic_sched, mgmt_vl);
    let internal_sched = with_management(internal_sched, mgmt_vl);
    let sched = (0..internal_port.len())
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
    Ok((sched, atomic, mtu_room))
}

/// One source per (endpoint, class) with a positive rate and one per flow, each with its own
/// random stream, and the heap of their first message times.
fn sources(
    cfg: &SimParams,
    n: usize,
    flows: &[FlowSpec],
    flow_routes: &[u32],
) -> (Vec<Source>, super::calendar::Calendar) {
    let mut sources = Vec::new();
    let mut gen_calendar = super::calendar::Calendar::default();
    for e in 0..n as u32 {
        for (c, cc) in cfg.traffic.classes.iter().enumerate() {
            let rate = cfg.traffic.class_rate(c);
            if rate <= 0.0 {
                continue;
            }
            let id = sources.len() as u32;
            if cc.has_workload() {
                let size = cc.size_config().sampler();
                let default = match cfg.traffic.injection {
                    InjectionKind::Bernoulli => SimpleProcess::Bernoulli,
                    InjectionKind::Cbr => SimpleProcess::Cbr,
                };
                let mut arrivals = Arrivals::new(cc.process.as_ref(), default, rate, size.mean());
                let mut rng = stream(cfg.seed, StreamKind::Source, e as u64 * 64 + c as u64);
                let first = arrivals.first(&mut rng);
                gen_calendar.push(first, id);
                sources.push(Source {
                    endpoint: e,
                    class: c as u8,
                    p: 0.0,
                    ln_q: 0.0,
                    period: 0.0,
                    acc: 0.0,
                    rng,
                    workload: Some(Box::new((arrivals, size))),
                    flow: None,
                });
                continue;
            }
            let p = (rate / cc.message_flits as f64).min(1.0);
            let mut src = Source {
                endpoint: e,
                class: c as u8,
                p,
                ln_q: (1.0 - p).ln(),
                period: 1.0 / p,
                acc: 0.0,
                rng: stream(cfg.seed, StreamKind::Source, e as u64 * 64 + c as u64),
                workload: None,
                flow: None,
            };
            let first = match cfg.traffic.injection {
                InjectionKind::Bernoulli => src.geometric_gap() - 1,
                InjectionKind::Cbr => {
                    src.acc = src.rng.gen::<f64>() * src.period;
                    src.acc.floor() as u64
                }
            };
            gen_calendar.push(first, id);
            sources.push(src);
        }
    }
    // Flows: one source each, with its own stream (so adding flows never shifts the class
    // sources' numbers), arrival times drawn relative to the flow's start.
    let default = match cfg.traffic.injection {
        InjectionKind::Bernoulli => SimpleProcess::Bernoulli,
        InjectionKind::Cbr => SimpleProcess::Cbr,
    };
    for (i, f) in flows.iter().enumerate() {
        let size = f.size.sampler();
        let mut arrivals = Arrivals::new(f.process.as_ref(), default, f.rate, size.mean());
        let mut rng = stream(cfg.seed, StreamKind::Flow, i as u64);
        let first = arrivals.first(&mut rng).saturating_add(f.start);
        let id = sources.len() as u32;
        if first < f.stop {
            gen_calendar.push(first, id);
        }
        sources.push(Source {
            endpoint: f.src,
            class: f.class,
            p: 0.0,
            ln_q: 0.0,
            period: 0.0,
            acc: 0.0,
            rng,
            workload: Some(Box::new((arrivals, size))),
            flow: Some(FlowSource {
                tag: MsgTag {
                    flow: i as u32,
                    path: f.path as u8,
                    route: flow_routes[i],
                    ..MsgTag::CLASS
                },
                dst: f.dst,
                start: f.start,
                stop: f.stop,
            }),
        });
    }
    (sources, gen_calendar)
}
