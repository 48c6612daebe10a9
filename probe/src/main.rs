fn main() {
    println!("vnb-probe {}", env!("CARGO_PKG_VERSION"));
}
