"""`python -m bench.edge`: the TLS edge's benchmark alone, its section of bench/results.md
rewritten."""

import argparse

import bench.edge
from bench.environment import create_database
from bench.load import add_load_arguments

parser = argparse.ArgumentParser(prog="python -m bench.edge", description=bench.edge.__doc__)
add_load_arguments(parser)
args = parser.parse_args()
create_database()
bench.edge.write_section(bench.edge.measure(args))
