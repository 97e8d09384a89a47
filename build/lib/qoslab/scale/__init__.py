"""The scale model (issue 32): the knobs a topology's ``scale:`` block sets (:mod:`.knobs`), the
dimensionless quantities that decide a QoS experiment's outcome (:mod:`.model`), and the
derivation of testbed settings from a real cluster's description (:mod:`.derive`). The page that
explains them is ``docs/scale-model.md``. Every module here is pure (no I/O beyond reading YAML
in :func:`.derive.load_real_cluster`)."""
