"""Training on an offline compute node: a bundle built here, one command there, the results brought back.

``bundle`` packs what the training stages read (the pipeline's inputs, the starting weights, the packages the
node lacks) into one folder; ``node`` runs every trained system's stages from it with plain ``python3`` and
writes the figures, curves and ``gpu_profile.json``; ``importer`` brings them back as a DVC experiment.
"""
