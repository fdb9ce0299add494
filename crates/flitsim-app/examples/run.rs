//! Runs one experiment file and prints the result JSON (the engine without Python):
//! `cargo run --release -p flitsim-app --example run -- FILE.toml [--set key=value]... [--seed N]`
/// Large blocks on transparent huge pages (see `flitsim_sim::alloc`).
#[global_allocator]
static ALLOC: flitsim_sim::alloc::HugePages = flitsim_sim::alloc::HugePages;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut sets = Vec::new();
    let mut seed = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--set" => sets.push(args.next().expect("--set key=value")),
            "--seed" => {
                seed = Some(
                    args.next()
                        .expect("--seed N")
                        .parse()
                        .expect("seed is an integer"),
                )
            }
            _ => file = Some(a),
        }
    }
    let file = file.expect("usage: run FILE.toml [--set key=value]... [--seed N]");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
        eprintln!("error: {file}: {e}");
        std::process::exit(2)
    });
    match flitsim_app::run_experiment_json(&text, &file, &sets, seed) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    }
}
