"""How a training stage's work is launched: in place, or in every ``torchrun`` rank of one or more machines
(``torchrun.py``), and how another machine lends its processes (``python -m pipeline.launcher.join``). It sits
above ``pipeline.params`` and ``pipeline.training`` (it validates a launch's params and imports the stage's
module), so the training loop below it imports neither."""
