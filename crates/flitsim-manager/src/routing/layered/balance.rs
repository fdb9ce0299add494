//! Layer balancing (spare VLs to the busiest layers) and the tables of a layered routing
//! ([`layered_fabric`]).
use super::offline::LayerResult;
use super::paths::PathSet;
use crate::routing::tables::{lane_fabric, pair_lane, path_sls, PathSls};
use crate::routing::{fit_lanes, RoutingRequest, VlBlocks};
use crate::{FabricConfig, PathTables, RoutingError};
use flitsim_topology::{EndpointId, PortNum, Topology};

/// Endpoint pairs per layer.
fn layer_weights(paths: &PathSet, layer: &[u8], layers: usize) -> Vec<u64> {
    let mut w = vec![0u64; layers];
    for (u, &l) in layer.iter().enumerate() {
        w[l as usize] += paths.weight[u] as u64;
    }
    w
}

/// Layer balancing (Domke et al. 2011, end of Algorithm 2): with `lanes` VLs for `used`
/// layers, every layer keeps its own lane and each spare lane goes to the layer with the most
/// endpoint pairs per lane; a layer's paths are then spread over its lanes. Any subset of an
/// acyclic layer's paths is acyclic, so no further cycle search is needed. Returns the first
/// lane and the lane count of every layer.
pub(in crate::routing) fn balance_groups(weights: &[u64], lanes: usize) -> Vec<(u8, u8)> {
    let mut size = vec![1u64; weights.len()];
    for _ in weights.len()..lanes {
        // Largest weight / size; ties to the lower layer.
        let best = (0..weights.len())
            .max_by(|&a, &b| {
                (weights[a] as u128 * size[b] as u128)
                    .cmp(&(weights[b] as u128 * size[a] as u128))
                    .then(b.cmp(&a))
            })
            .expect("at least one layer");
        size[best] += 1;
    }
    let mut base = 0u64;
    size.iter()
        .map(|&s| {
            let g = (base as u8, s as u8);
            base += s;
            g
        })
        .collect()
}

/// How a layered engine wants its tables built by [`layered_fabric`].
pub(in crate::routing) struct LayerPlan {
    /// Engine name for the tables and messages.
    pub engine: &'static str,
    /// What the layers were computed with, for the error message.
    pub method: String,
    /// Spread the layers over all VLs of a class's block.
    pub balance: bool,
    /// Use at most this many VLs per class.
    pub max_layers: Option<u8>,
}

/// Builds the tables of a layered routing from the layer of every unit of `paths` (or the
/// number of layers a search gave up at): path SL = lane of the path's layer, VL = first VL
/// of the class's block + path SL on every hop and on the injection link. Fails with
/// [`RoutingError::NotEnoughVls`] naming the number of layers needed when the VLs (or
/// `max_layers`) cannot hold them.
///
/// `lfts` holds the tables of every path per destination (one for single-path routing); with
/// several, `paths` is [`PathSet::from_lfts`] of them and the further paths go to
/// [`FabricConfig::alt_paths`] with their own path SLs.
pub(in crate::routing) fn layered_fabric(
    topo: &Topology,
    req: &RoutingRequest,
    lfts: Vec<Vec<Vec<PortNum>>>,
    paths: &PathSet,
    layers: LayerResult,
    plan: &LayerPlan,
) -> Result<FabricConfig, RoutingError> {
    let (layer, needed) = match layers {
        Ok((layer, n)) => (layer, Ok(n)),
        Err(n) => (Vec::new(), Err(n)),
    };
    let weights = match needed {
        Ok(n) => layer_weights(paths, &layer, n),
        Err(_) => Vec::new(),
    };
    let row_of_endpoint: Vec<u32> = (0..topo.num_endpoints() as u32)
        .map(|e| paths.row[topo.endpoint_switch(EndpointId(e)).0 .0 as usize])
        .collect();
    // The unit of an endpoint pair: its source switch's row, and the destination endpoint or,
    // for per-switch paths, the destination switch's row.
    let n_ep = topo.num_endpoints();
    let layer_of = |src: usize, dst: usize, k: usize| {
        let col = if paths.per_switch {
            row_of_endpoint[dst] as usize
        } else {
            k * n_ep + dst
        };
        layer[row_of_endpoint[src] as usize * paths.dests + col]
    };
    let limit = req.vls.min(plan.max_layers.unwrap_or(u8::MAX));
    let limit_note = match plan.max_layers {
        Some(m) if m < req.vls => format!(" (max_layers = {m})"),
        _ => String::new(),
    };
    let needed = match needed {
        Ok(n) if n <= limit as usize => n as u8,
        Ok(n) => {
            return Err(RoutingError::NotEnoughVls(format!(
                "{} needs {n} virtual layers ({}), but only {limit} VL{} {} available{limit_note}",
                plan.engine,
                plan.method,
                if limit == 1 { "" } else { "s" },
                if limit == 1 { "is" } else { "are" },
            )))
        }
        Err(n) => {
            return Err(RoutingError::NotEnoughVls(format!(
                "{} needs more than {} virtual layers ({}), but only {limit} VL{} {} available{limit_note}",
                plan.engine,
                n - 1,
                plan.method,
                if limit == 1 { "" } else { "s" },
                if limit == 1 { "is" } else { "are" },
            )))
        }
    };
    let blocks = VlBlocks::new(req, needed, plan.engine)?;
    let lanes = if plan.balance {
        fit_lanes(blocks.per_class.min(limit), 1, req.classes, plan.engine)?
    } else {
        needed
    };
    if lanes < needed {
        return Err(RoutingError::Unroutable(format!(
            "{}: {needed} layers with {} classes exceed the 256 wire SLs",
            plan.engine, req.classes
        )));
    }
    let groups = if plan.balance {
        balance_groups(&weights, lanes as usize)
    } else {
        (0..needed).map(|l| (l, 1)).collect()
    };
    let routing_sls = lanes;
    let path_sl_of = |k: usize| {
        path_sls(n_ep, routing_sls, |src, dst| {
            let (base, size) = groups[layer_of(src, dst, k) as usize];
            base + pair_lane(src, dst, size)
        })
    };
    let mut lfts = lfts.into_iter();
    let lft = lfts.next().expect("at least one path");
    let sls = PathSls {
        routing_sls,
        layers: needed,
        path_sl: path_sl_of(0),
    };
    let mut f = lane_fabric(plan.engine, topo, req, &blocks, lft, sls);
    f.alt_paths = lfts
        .enumerate()
        .map(|(i, lft)| PathTables {
            lft,
            path_sl: path_sl_of(i + 1),
        })
        .collect();
    Ok(f)
}
