use super::*;
use crate::routing::{route_with, EngineOptions, RoutingRequest};
use flitsim_topology::generators;

const REQ: RoutingRequest = RoutingRequest { vls: 1, classes: 1 };

fn routed(topo: &Topology, engine: &str, lmc: u8) -> FabricConfig {
    route_with(
        topo,
        engine,
        &REQ,
        &EngineOptions {
            lmc,
            ..EngineOptions::default()
        },
    )
    .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Three flows of 0.3 into endpoint 3 share its ejection link: with limit 0.7 two fit
/// (0.6), the third (0.9) is refused by that link, named by both ends.
#[test]
fn a_shared_link_admits_two_flows_of_0_3_and_refuses_the_third() {
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let fabric = routed(&topo, "minhop", 0);
    let flows: Vec<FlowRequest> = (0..3).map(|s| FlowRequest::qos(s, 3, 0.3)).collect();
    let r = admit(&topo, &fabric, &flows, 0.7).unwrap();
    assert_eq!(r.admitted.len(), 2);
    assert_eq!(
        r.admitted.iter().map(|a| a.flow).collect::<Vec<_>>(),
        [0, 1]
    );
    assert!(close(r.admitted[1].max_load, 0.6));
    assert_eq!(r.rejected.len(), 1);
    let x = &r.rejected[0];
    assert_eq!((x.flow, x.src, x.dst, x.path), (2, 2, 3, 0));
    assert_eq!(
        x.link.name,
        "switch \"sw_l0_0\" port 3 → endpoint 3 (\"ep3\")"
    );
    assert_eq!(
        x.link.from,
        Place::Port {
            switch: "sw_l0_0".into(),
            port: 3
        }
    );
    assert!(close(x.load, 0.6) && close(x.limit, 0.7) && close(x.link.capacity, 1.0));
    assert!(
        x.message
            .contains("load 0.6 + 0.3 requested exceeds the limit 0.7"),
        "{}",
        x.message
    );
    // The ejection link holds 0.6; each source's injection link 0.3.
    let loads: Vec<(&str, f64, u32)> = r
        .links
        .iter()
        .map(|l| (l.link.name.as_str(), l.load, l.flows))
        .collect();
    assert_eq!(loads.len(), 3);
    assert_eq!(
        loads[0].0,
        "endpoint 0 (\"ep0\") → switch \"sw_l0_0\" port 0"
    );
    assert!(close(loads[0].1, 0.3) && loads[0].2 == 1);
    assert_eq!(loads[2].0, x.link.name);
    assert!(close(loads[2].1, 0.6) && loads[2].2 == 2);
}

/// 4-ary 2-tree with LMC 2: the four paths between endpoints of different leaves cross the
/// four spines. Eight flows of 0.2 from leaf 0 to leaf 1, two per source and per destination,
/// are spread over the spines by least-occupied selection, equally (two flows per up link),
/// although their injection and ejection links make every candidate's maximum the same.
#[test]
fn least_occupied_selection_spreads_flows_over_the_spines() {
    let topo = generators::kary_ntree(4, 2, 1).unwrap();
    for engine in ["minhop", "updn", "dmodk"] {
        let fabric = routed(&topo, engine, 2);
        assert_eq!(fabric.num_paths(), 4);
        let flows: Vec<FlowRequest> = (0..8u32)
            .map(|i| FlowRequest::qos(i % 4, 4 + (i + i / 4) % 4, 0.2))
            .collect();
        let r = admit(&topo, &fabric, &flows, 0.7).unwrap();
        assert_eq!(r.admitted.len(), 8, "{engine}");
        assert!(r.rejected.is_empty());
        // Up links of leaf 0 (switch 0, ports 4..8).
        let up: Vec<f64> = (4..8u16)
            .map(|p| {
                r.links
                    .iter()
                    .find(|l| {
                        l.link.from
                            == Place::Port {
                                switch: topo.switches()[0].name.clone(),
                                port: p,
                            }
                    })
                    .map_or(0.0, |l| l.load)
            })
            .collect();
        let (lo, hi) = (
            up.iter().copied().fold(f64::MAX, f64::min),
            up.iter().copied().fold(0.0, f64::max),
        );
        assert!(hi - lo <= 0.2 + 1e-9, "{engine}: {up:?}");
        assert!(up.iter().all(|&x| close(x, 0.4)), "{engine}: {up:?}");
    }
}

/// Flows from one leaf to one destination all meet the same up port on path 0 (the tables are
/// destination-based); least-occupied selection gives them the destination's four LIDs, one
/// per spine, instead of stacking them on one up link.
#[test]
fn flows_to_one_destination_take_its_different_paths() {
    let topo = generators::kary_ntree(4, 2, 1).unwrap();
    let fabric = routed(&topo, "minhop", 2);
    let flows: Vec<FlowRequest> = (0..4).map(|s| FlowRequest::qos(s, 4, 0.15)).collect();
    let r = admit(&topo, &fabric, &flows, 0.7).unwrap();
    let paths: Vec<usize> = r.admitted.iter().map(|a| a.path).collect();
    assert_eq!(paths, [0, 1, 2, 3]);
    // Each up link of leaf 0 carries one flow; the ejection link all four.
    let on_leaf0 = |p: u16| {
        r.links.iter().find(|l| {
            l.link.from
                == Place::Port {
                    switch: "sw_l0_0".into(),
                    port: p,
                }
        })
    };
    for p in 4..8 {
        assert_eq!(on_leaf0(p).map(|l| l.flows), Some(1), "port {p}");
    }
    assert!(close(r.admitted[3].max_load, 0.6));
}

/// Without LMC there is one candidate, so the same flows pile onto path 0's spine.
#[test]
fn a_single_path_fabric_has_one_candidate() {
    let topo = generators::kary_ntree(4, 2, 1).unwrap();
    let fabric = routed(&topo, "minhop", 0);
    let flows: Vec<FlowRequest> = (0..4).map(|_| FlowRequest::qos(0, 4, 0.2)).collect();
    let r = admit(&topo, &fabric, &flows, 0.7).unwrap();
    assert_eq!((r.admitted.len(), r.rejected.len(), r.paths), (3, 1, 1));
    assert!(r.admitted.iter().all(|a| a.path == 0 && a.candidates == 1));
}

/// Unregulated flows are never rejected and reserve nothing, however much they ask.
#[test]
fn unregulated_flows_are_never_rejected_nor_counted() {
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let fabric = routed(&topo, "minhop", 0);
    let mut flows: Vec<FlowRequest> = (0..3)
        .map(|s| FlowRequest::unregulated(s, 3, 0.9))
        .collect();
    flows.push(FlowRequest::qos(0, 3, 0.7));
    flows.push(FlowRequest {
        name: Some("control".into()),
        ..FlowRequest::unregulated(1, 3, 1.0)
    });
    let r = admit(&topo, &fabric, &flows, 0.7).unwrap();
    assert_eq!(
        r.unregulated.iter().map(|u| u.flow).collect::<Vec<_>>(),
        [0, 1, 2, 4]
    );
    assert_eq!(r.unregulated[3].name.as_deref(), Some("control"));
    assert_eq!(r.admitted.len(), 1);
    assert_eq!(r.admitted[0].flow, 3);
    assert!(r.rejected.is_empty());
    assert!(r.links.iter().all(|l| close(l.load, 0.7) && l.flows == 1));
    assert_eq!(r.links.len(), 2);
}

/// Limit 1.0 admits up to the whole link exactly (sums of tenths included) and no further;
/// limits outside (0, 1] are errors.
#[test]
fn limit_one_fills_links_exactly() {
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let fabric = routed(&topo, "minhop", 0);
    let flows: Vec<FlowRequest> = (0..11).map(|_| FlowRequest::qos(0, 1, 0.1)).collect();
    let r = admit(&topo, &fabric, &flows, 1.0).unwrap();
    assert_eq!((r.admitted.len(), r.rejected.len()), (10, 1));
    assert!(close(r.admitted[9].max_load, 1.0));
    assert!(close(r.rejected[0].load, 1.0));
    let r = admit(&topo, &fabric, &[FlowRequest::qos(0, 1, 1.0)], 1.0).unwrap();
    assert_eq!(r.admitted.len(), 1);
    let r = admit(&topo, &fabric, &[FlowRequest::qos(0, 1, 1.5)], 1.0).unwrap();
    assert_eq!(r.rejected.len(), 1);
    assert!(r.links.is_empty(), "a rejection reserves nothing");
    for bad in [0.0, -0.5, 1.01, f64::NAN, f64::INFINITY] {
        let e = admit(&topo, &fabric, &flows, bad).unwrap_err();
        assert!(matches!(e, CacError::Limit(_)), "{bad}");
        assert!(e.to_string().contains("at most 1"), "{e}");
    }
}

/// Malformed flows are errors naming the flow and the field.
#[test]
fn bad_flows_name_their_index_and_field() {
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let fabric = routed(&topo, "minhop", 0);
    let e = |f: FlowRequest| {
        admit(&topo, &fabric, &[FlowRequest::qos(0, 1, 0.1), f], 0.7)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        e(FlowRequest::qos(0, 9, 0.1)),
        "flow[1].dst: endpoint 9 does not exist (the fabric has 4 endpoints)"
    );
    assert!(e(FlowRequest::qos(7, 1, 0.1)).starts_with("flow[1].src: endpoint 7"));
    assert!(
        e(FlowRequest::qos(2, 2, 0.1)).contains("flow[1].dst: a flow from endpoint 2 to itself")
    );
    assert!(e(FlowRequest::qos(0, 1, 0.0)).starts_with("flow[1].rate: 0: must be a positive"));
    assert!(e(FlowRequest::qos(0, 1, f64::NAN)).starts_with("flow[1].rate"));
    // Unregulated flows are checked too.
    assert!(e(FlowRequest::unregulated(0, 1, -1.0)).starts_with("flow[1].rate"));
}

/// When every candidate would overload, the refusal is on the least-bad path, at its most
/// loaded link.
#[test]
fn a_refusal_names_the_most_loaded_link_of_the_least_bad_path() {
    let topo = generators::kary_ntree(4, 2, 1).unwrap();
    let fabric = routed(&topo, "minhop", 2);
    // Four flows of 0.5 from leaf 0 (one per source) fill the four spines' up links to 0.5,
    // then a flow of 0.3 from endpoint 0 (injection 0.5 → 0.8) cannot go anywhere.
    let mut flows: Vec<FlowRequest> = (0..4).map(|s| FlowRequest::qos(s, 4 + s, 0.5)).collect();
    flows.push(FlowRequest::qos(0, 5, 0.3));
    let r = admit(&topo, &fabric, &flows, 0.7).unwrap();
    assert_eq!(r.admitted.len(), 4);
    let x = &r.rejected[0];
    assert_eq!(x.flow, 4);
    // Every candidate peaks at 0.8 (injection link, up link, ejection link of endpoint 5); the
    // injection link comes first on the path.
    assert_eq!(
        x.link.name,
        "endpoint 0 (\"ep0\") → switch \"sw_l0_0\" port 0"
    );
    assert!(close(x.load, 0.5));
}

/// The paper's network: 8 flows of 0.6 from the 8 endpoints of one stage-0 switch to another
/// stage-0 switch each climb to a different top switch (LMC 3: 8 paths, one per top switch),
/// and one more flow of 0.2 into one of those destinations is refused.
#[test]
fn the_papers_min_balances_over_its_eight_top_switches() {
    let topo = generators::from_spec("min:endpoints=128,radix=16").unwrap();
    let fabric = routed(&topo, "minhop", 3);
    let flows: Vec<FlowRequest> = (0..8).map(|s| FlowRequest::qos(s, 8 + s, 0.6)).collect();
    let r = admit(&topo, &fabric, &flows, 0.7).unwrap();
    assert_eq!(r.admitted.len(), 8);
    let mut tops: Vec<u32> = r
        .admitted
        .iter()
        .map(|a| {
            let hops = fabric
                .trace_path(&topo, EndpointId(a.src), EndpointId(a.dst), 0, a.path)
                .unwrap();
            hops.iter().map(|h| h.switch.0).max().unwrap()
        })
        .collect();
    tops.sort_unstable();
    assert_eq!(tops, (16..24).collect::<Vec<_>>());
    // 8 injection, 8 up, 8 down and 8 ejection links, each at 0.6.
    assert_eq!(r.links.len(), 32);
    assert!(r.links.iter().all(|l| close(l.load, 0.6) && l.flows == 1));
    // From endpoint 16 (stage-0 switch 2) to endpoint 8: every candidate reaches switch 1 over
    // a down link at 0.6 or the ejection link at 0.6, which 0.2 more would take to 0.8.
    let mut more = flows.clone();
    more.push(FlowRequest::qos(16, 8, 0.2));
    let r = admit(&topo, &fabric, &more, 0.7).unwrap();
    assert_eq!(r.rejected.len(), 1);
    assert!(r.rejected[0].message.contains("exceeds the limit 0.7"));
}

/// The same input gives the same report, field for field and in JSON.
#[test]
fn reports_are_deterministic() {
    let topo = generators::kary_ntree(4, 2, 1).unwrap();
    let fabric = routed(&topo, "updn", 2);
    let flows: Vec<FlowRequest> = (0..40u32)
        .map(|i| FlowRequest {
            name: Some(format!("f{i}")),
            qos: i % 5 != 0,
            ..FlowRequest::qos(i % 16, (i * 7 + 3) % 16, 0.05 + f64::from(i % 7) * 0.04)
        })
        .filter(|f| f.src != f.dst)
        .collect();
    let a = admit(&topo, &fabric, &flows, 0.7).unwrap();
    let b = admit(&topo, &fabric, &flows, 0.7).unwrap();
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    assert_eq!(
        a.admitted.len() + a.rejected.len() + a.unregulated.len(),
        flows.len()
    );
    // No link is above the limit, and the links' reservations add up to the admitted flows'.
    assert!(a.links.iter().all(|l| l.load <= 0.7 + 1e-9));
    let flits: f64 = a.links.iter().map(|l| l.reserved).sum();
    let want: f64 = a
        .admitted
        .iter()
        .map(|x| {
            let hops = fabric
                .trace_path(&topo, EndpointId(x.src), EndpointId(x.dst), 0, x.path)
                .unwrap();
            x.rate * (hops.len() + 1) as f64
        })
        .sum();
    assert!(close(flits, want), "{flits} vs {want}");
    // Links in order: injection links by endpoint, then switch ports.
    let order: Vec<(u8, String)> = a
        .links
        .iter()
        .map(|l| match &l.link.from {
            Place::Node { endpoint, .. } => (0, format!("{endpoint:08}")),
            Place::Port { switch, port } => (1, format!("{switch}:{port:05}")),
        })
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
}

/// A request by request use of the ledger gives what the batch gives.
#[test]
fn requests_one_by_one_match_the_batch() {
    let topo = generators::kary_ntree(4, 1, 1).unwrap();
    let fabric = routed(&topo, "minhop", 0);
    let mut cac = AdmissionControl::new(&topo, &fabric, 0.7).unwrap();
    assert!(matches!(
        cac.request(&FlowRequest::qos(0, 1, 0.5)),
        Ok(Decision::Admitted(_))
    ));
    assert!(cac.request(&FlowRequest::qos(0, 0, 0.5)).is_err());
    match cac.request(&FlowRequest::qos(2, 1, 0.5)) {
        Ok(Decision::Rejected(r)) => assert_eq!(r.flow, 2),
        other => panic!("{other:?}"),
    }
    assert_eq!(cac.links().len(), 2);
}
