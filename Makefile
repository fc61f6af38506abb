# The engine testers' build convention (OpenBench, fishtest-style clients):
#
#     make -j EXE=numbat-x      leaves one runnable engine file, numbat-x, its numba cache warmed
#     ./numbat-x bench          last line "N nodes M nps"
#     ./numbat-x                speaks UCI
#
# The file keeps running after this source folder is deleted (engine/tools/build.py says how).
# Users install with pip as the README says; this is not a second install path.
#
#     make wheel                the wheel users install (dist/), every kernel compiled for x86-64-v3

EXE ?= numbat
PYTHON ?= python3

.PHONY: all $(EXE) wheel test bench clean

all: $(EXE)

$(EXE):
	$(PYTHON) -m engine.tools.build --out $(EXE)

wheel:
	$(PYTHON) -m engine.tools.wheel --outdir dist

test:
	$(PYTHON) -m pytest -q

bench:
	$(PYTHON) run_engine.py bench

clean:
	rm -rf $(EXE) $(EXE).tmp dist engine/kernels
