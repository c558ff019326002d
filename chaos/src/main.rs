//! Jepsen-style chaos harness for Rafter (grows with the multi-replica issue).
fn main() {
    println!("rafter-chaos: no scenarios yet");
}
