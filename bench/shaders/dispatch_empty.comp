#version 450
// Does nothing (bench_dispatch): what a dispatch costs beyond its shader's work.
layout(local_size_x = 64) in;
void main() {}
