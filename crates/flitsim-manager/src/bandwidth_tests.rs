use super::*;
use crate::routing::{route, RoutingRequest};
use flitsim_topology::generators;
use proptest::prelude::*;

fn fabric(t: &Topology) -> FabricConfig {
    route(t, "dmodk", &RoutingRequest { vls: 1, classes: 1 }).unwrap()
}

/// T = MTU = 16: B_max = 1 flit/cycle, the link.
fn params() -> BandwidthParams {
    BandwidthParams {
        dispatch_time: 16.0,
        mtu: 16.0,
        node_capacity: None,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn refusal(e: BandwidthError) -> Refusal {
    match e {
        BandwidthError::Refused(r) => r,
        e => panic!("not a refusal: {e}"),
    }
}

#[test]
fn idt_is_t_times_b_max_over_b_req() {
    // §3.3.1: idt = T · B_max / B_req. The §5.4 pairs: B_max/2 → 2T; 0.3 and 0.7 of B_max →
    // 10T/3 and 10T/7; a quarter → 4T.
    let t = 96.0;
    assert!(close(idt(t, 1.0, 0.5), 2.0 * t));
    assert!(close(idt(t, 1.0, 0.3), 10.0 * t / 3.0));
    assert!(close(idt(t, 1.0, 0.7), 10.0 * t / 7.0));
    assert!(close(idt(t, 1.0, 0.25), 4.0 * t));
    // With T = MTU = 16 flits and B_max = 1 flit/cycle, IDT = MTU / B_req.
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let f = fabric(&topo);
    let mut m = BandwidthManager::new(&topo, Some(&f), params()).unwrap();
    let a = m.allocate(0, 1, 0.3).unwrap();
    let b = m.allocate(0, 2, 0.7).unwrap();
    assert!(close(a.idt, 16.0 / 0.3) && close(b.idt, 16.0 / 0.7));
    // B_max = MTU / T below the link: T = 32, B_max = 0.5; 0.25 → IDT 2T.
    let p = BandwidthParams {
        dispatch_time: 32.0,
        ..params()
    };
    let mut m = BandwidthManager::new(&topo, Some(&f), p).unwrap();
    assert!(close(m.allocate(0, 1, 0.25).unwrap().idt, 64.0));
    assert!(matches!(
        m.allocate(0, 2, 0.6),
        Err(BandwidthError::AbovePeak { endpoint: 0, .. })
    ));
}

#[test]
fn best_effort_gets_the_surplus_as_in_section_5_6() {
    // §5.6 on one crossbar: the link ≈ 80 MB/s is 1 flit/cycle, so 40 MB/s is 0.5 and
    // 20 MB/s is 0.25. One best-effort flow alone gets the peak; with premium 40 MB/s from
    // the same node it gets the surplus 0.5 (the thesis measured ≈ 38 MB/s ≈ 0.475); with the
    // second premium flow of 20 MB/s, 0.25 (thesis ≈ 18 MB/s ≈ 0.225); back up as they leave.
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let f = fabric(&topo);
    let mut m = BandwidthManager::new(&topo, Some(&f), params()).unwrap();
    let be = m.add_best_effort(0, 1).unwrap();
    let rate = |m: &BandwidthManager| m.flow(be).unwrap().rate;
    assert!(close(rate(&m), 1.0));
    assert_eq!(m.flow(be).unwrap().idt, Some(16.0));
    let p1 = m.allocate(0, 2, 0.5).unwrap();
    assert!(close(rate(&m), 0.5));
    assert_eq!(m.flow(be).unwrap().idt, Some(32.0));
    let p2 = m.allocate(0, 3, 0.25).unwrap();
    assert!(close(rate(&m), 0.25));
    let ups = m.take_updates();
    assert_eq!(
        ups.last(),
        Some(&IdtUpdate {
            id: be,
            idt: Some(64.0)
        })
    );
    m.release(p2.id).unwrap();
    assert!(close(rate(&m), 0.5));
    m.release(p1.id).unwrap();
    assert!(close(rate(&m), 1.0));
    // Two best-effort flows and one premium flow of 20 MB/s: they split the surplus (thesis:
    // ≈ 39 MB/s each alone, the surplus 58 MB/s equally with the premium flow).
    let be2 = m.add_best_effort(0, 2).unwrap();
    assert!(close(rate(&m), 0.5) && close(m.flow(be2).unwrap().rate, 0.5));
    m.allocate(0, 3, 0.25).unwrap();
    assert!(close(rate(&m), 0.375) && close(m.flow(be2).unwrap().rate, 0.375));
}

#[test]
fn best_effort_takes_the_minimum_over_its_path() {
    // A best-effort flow 1 → 0 shares node 0 with a premium 0 → 2 of 0.6 (node 0's surplus
    // 0.4) and with another best-effort flow 3 → 0 (0.2 each at node 0).
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let f = fabric(&topo);
    let mut m = BandwidthManager::new(&topo, Some(&f), params()).unwrap();
    m.allocate(0, 2, 0.6).unwrap();
    let a = m.add_best_effort(1, 0).unwrap();
    assert!(close(m.flow(a).unwrap().rate, 0.4));
    let b = m.add_best_effort(3, 0).unwrap();
    assert!(close(m.flow(a).unwrap().rate, 0.2) && close(m.flow(b).unwrap().rate, 0.2));
    // No surplus: no IDT.
    m.allocate(2, 1, 1.0).unwrap_err();
    m.allocate(0, 3, 0.4).unwrap();
    assert_eq!(m.flow(a).unwrap().idt, None);
    assert_eq!(m.flow(a).unwrap().rate, 0.0);
}

#[test]
fn refusals_name_the_criterion_and_the_place() {
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let f = fabric(&topo);
    let mut m = BandwidthManager::new(&topo, Some(&f), params()).unwrap();
    m.allocate(0, 1, 0.3).unwrap();
    m.allocate(0, 2, 0.7).unwrap();
    let r = refusal(m.allocate(0, 3, 0.1).unwrap_err());
    assert_eq!(r.criterion, Criterion::SourceNode);
    assert!(matches!(r.at, Place::Node { endpoint: 0, .. }));
    assert!(close(r.reserved, 1.0) && close(r.capacity, 1.0));
    assert!(
        r.to_string()
            .ends_with(": 1 reserved + 0.1 requested exceeds 1 flits/cycle"),
        "{r}"
    );
    // End-node contention: what node 3 sends counts against what it may receive.
    let mut m = BandwidthManager::new(&topo, Some(&f), params()).unwrap();
    m.allocate(3, 1, 0.6).unwrap();
    let r = refusal(m.allocate(2, 3, 0.5).unwrap_err());
    assert_eq!(r.criterion, Criterion::DestinationNode);
    assert!(matches!(r.at, Place::Node { endpoint: 3, .. }));
    // A flow into node 1 lowers what node 1 may send.
    let r = refusal(m.allocate(1, 2, 0.5).unwrap_err());
    assert_eq!(r.criterion, Criterion::SourceNode);
    assert!(
        r.to_string().contains("source node capacity at endpoint 1"),
        "{r}"
    );
    // Switch output port: on a 2-ary 2-tree, 0 → 2 and 1 → 2 share the leaf's up port.
    let topo = generators::kary_ntree(2, 2, 1).unwrap();
    let f = fabric(&topo);
    let mut m = BandwidthManager::new(&topo, Some(&f), params()).unwrap();
    let a = m.allocate(0, 2, 0.6).unwrap();
    let info = m.flow(a.id).unwrap();
    // dmodk picks the up port by destination: 1 → 2 leaves leaf 0 by 0 → 2's up port.
    let r = refusal(m.allocate(1, 2, 0.5).unwrap_err());
    assert_eq!(r.criterion, Criterion::SwitchPort);
    assert!(info.places.contains(&r.at), "{r} not on {:?}", info.places);
    assert!(matches!(&r.at, Place::Port { switch, .. } if r.to_string().contains(switch.as_str())));
}

#[test]
fn bad_input_is_an_error_and_changes_nothing() {
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let f = fabric(&topo);
    let mut m = BandwidthManager::new(&topo, Some(&f), params()).unwrap();
    let a = m.allocate(0, 1, 0.5).unwrap();
    m.add_best_effort(2, 1).unwrap();
    m.take_updates();
    let before = m.flows();
    let errs = [
        m.allocate(2, 2, 0.1).unwrap_err(),
        m.allocate(0, 1, 1.5).unwrap_err(),
        m.allocate(0, 9, 0.1).unwrap_err(),
        m.allocate(0, 1, -1.0).unwrap_err(),
        m.allocate(0, 1, f64::NAN).unwrap_err(),
        m.add_best_effort(1, 1).unwrap_err(),
        m.add_best_effort(7, 1).unwrap_err(),
        m.release(99).unwrap_err(),
        m.allocate_via(0, 2, 0.1, &Via::Route(vec![9])).unwrap_err(),
        m.allocate_via(0, 2, 0.1, &Via::Tables { class: 0, path: 3 })
            .unwrap_err(),
    ];
    assert_eq!(errs[0], BandwidthError::SelfFlow(2));
    assert!(matches!(
        errs[1],
        BandwidthError::AbovePeak { endpoint: 0, .. }
    ));
    assert_eq!(
        errs[2],
        BandwidthError::UnknownEndpoint {
            endpoint: 9,
            endpoints: 4
        }
    );
    assert!(matches!(errs[3], BandwidthError::BadRate(_)));
    assert!(matches!(errs[4], BandwidthError::BadRate(_)));
    assert_eq!(errs[7], BandwidthError::UnknownFlow(99));
    assert!(errs[8].to_string().contains("has no port 9"), "{}", errs[8]);
    assert!(matches!(errs[9], BandwidthError::NoPath(_)));
    assert_eq!(m.flows(), before);
    assert!(m.take_updates().is_empty());
    // Released twice: the second is an error.
    m.release(a.id).unwrap();
    assert_eq!(m.release(a.id), Err(BandwidthError::UnknownFlow(a.id)));
}

#[test]
fn source_routes_are_followed() {
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let mut m = BandwidthManager::new(&topo, None, params()).unwrap();
    let p = topo.endpoint_switch(EndpointId(2)).1;
    let a = m.allocate_via(0, 2, 0.5, &Via::Route(vec![p])).unwrap();
    let places = m.flow(a.id).unwrap().places;
    assert_eq!(places.len(), 3);
    assert!(matches!(&places[1], Place::Port { port, .. } if *port == p));
    // Without tables, a table path is an error; a route to the wrong endpoint too.
    assert!(matches!(
        m.allocate(0, 1, 0.1),
        Err(BandwidthError::NoPath(_))
    ));
    let e = m.allocate_via(0, 1, 0.1, &Via::Route(vec![p])).unwrap_err();
    assert!(e.to_string().contains("not the destination"), "{e}");
}

#[derive(Clone, Debug)]
enum Op {
    Alloc(u32, u32, f64),
    BestEffort(u32, u32),
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u32..8, 0u32..8, 0.01f64..0.8).prop_map(|(a, b, r)| Op::Alloc(a, b, r)),
        1 => (0u32..8, 0u32..8).prop_map(|(a, b)| Op::BestEffort(a, b)),
        1 => (0usize..64).prop_map(Op::Release),
    ]
}

/// Premium reservations and best-effort rates per place, summed from the flows and their
/// places (independently of the manager's own sums).
fn loads(m: &BandwidthManager) -> BTreeMap<String, (f64, f64)> {
    let mut out: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for f in m.flows() {
        for p in &f.places {
            let e = out.entry(format!("{p}")).or_default();
            match f.kind {
                FlowKind::Reserved(b) => e.0 += b,
                FlowKind::BestEffort => e.1 += f.rate,
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// On a 2-ary 3-tree (8 endpoints): the admitted set never exceeds a node's or a port's
    /// capacity, nor do the best-effort shares on top of it; a refusal names a place on the
    /// flow's path where the request does not fit; a failed operation changes nothing.
    #[test]
    fn admission_keeps_every_capacity(ops in proptest::collection::vec(op(), 1..40)) {
        let topo = generators::kary_ntree(2, 3, 1).unwrap();
        let f = fabric(&topo);
        let mut m = BandwidthManager::new(&topo, Some(&f), params()).unwrap();
        let mut ids: Vec<u64> = Vec::new();
        for op in ops {
            let before = m.flows();
            let res = match op {
                Op::Alloc(a, b, r) => m.allocate(a, b, r).map(|x| ids.push(x.id)),
                Op::BestEffort(a, b) => m.add_best_effort(a, b).map(|x| ids.push(x)),
                Op::Release(i) => match ids.get(i % ids.len().max(1)).copied() {
                    Some(id) if m.flow(id).is_some() => m.release(id),
                    _ => m.release(u64::MAX),
                },
            };
            if let Err(e) = res {
                prop_assert_eq!(m.flows(), before.clone());
                if let (BandwidthError::Refused(r), Op::Alloc(a, b, rate)) = (&e, &op) {
                    // A true reason: the place is on the path, and the request does not fit.
                    let path: Vec<Place> = f
                        .trace(&topo, EndpointId(*a), EndpointId(*b), 0)
                        .unwrap()
                        .iter()
                        .map(|h| Place::Port {
                            switch: topo.switches()[h.switch.0 as usize].name.clone(),
                            port: h.out_port,
                        })
                        .collect();
                    let ok_place = match (&r.criterion, &r.at) {
                        (Criterion::SourceNode, Place::Node { endpoint, .. }) => endpoint == a,
                        (Criterion::DestinationNode, Place::Node { endpoint, .. }) => endpoint == b,
                        (Criterion::SwitchPort, p) => path.contains(p),
                        _ => false,
                    };
                    prop_assert!(ok_place, "{} for {:?}", r, op);
                    let held = loads(&m).get(&format!("{}", r.at)).map_or(0.0, |x| x.0);
                    prop_assert!((held - r.reserved).abs() < 1e-9);
                    prop_assert!(held + rate > m.capacity_at(&r.at).unwrap() + EPS, "{}", r);
                }
            }
            for (place, (premium, be)) in loads(&m) {
                prop_assert!(premium <= 1.0 + 1e-9, "{} holds {}", place, premium);
                prop_assert!(premium + be <= 1.0 + 1e-9, "{} carries {} + {}", place, premium, be);
            }
        }
    }
}
