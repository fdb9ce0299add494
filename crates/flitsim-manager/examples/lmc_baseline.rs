//! Throwaway: writes dumps and JSON tables of several engines/topologies (not committed).
use flitsim_manager::opensm;
use flitsim_manager::routing::{route_with, EngineOptions, RoutingRequest};
use flitsim_topology::generators;

fn main() {
    let out = std::path::PathBuf::from(std::env::args().nth(1).expect("out dir"));
    let cases: &[(&str, &[&str])] = &[
        (
            "kary-ntree:k=4,n=3",
            &["minhop", "updn", "ftree", "dmodk", "sssp", "dfsssp", "lash"],
        ),
        (
            "random:switches=16,ports=8,endpoints=2,links=24,seed=3",
            &["minhop", "updn", "sssp", "dfsssp", "lash"],
        ),
        (
            "torus:4x4,endpoints=2",
            &["dor", "minhop", "updn", "sssp", "dfsssp", "lash"],
        ),
    ];
    for (spec, engines) in cases {
        let mut t = generators::from_spec(spec).unwrap();
        t.assign_missing_ids(0).unwrap();
        for e in *engines {
            let f = route_with(
                &t,
                e,
                &RoutingRequest { vls: 8, classes: 1 },
                &EngineOptions::default(),
            )
            .unwrap();
            let dir = out.join(format!("{}-{e}", spec.split(':').next().unwrap()));
            opensm::write_dir(&t, &f, &dir).unwrap();
            std::fs::write(dir.join("fabric.json"), serde_json::to_string(&f).unwrap()).unwrap();
        }
    }
}
