//! Compiles the gRPC definitions in `proto/` (tonic + prost) into `OUT_DIR`.
//! Each `.proto` file's package is included by the module that serves it
//! (`tonic::include_proto!("<package>")`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let mut protos: Vec<std::path::PathBuf> = std::fs::read_dir("proto")?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .collect();
    protos.sort();
    if protos.is_empty() {
        return Ok(());
    }
    tonic_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_protos(&protos, &["proto"])?;
    Ok(())
}
