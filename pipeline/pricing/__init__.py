"""What a spec's model is made of and costs: op profiles, families' import rules, weight inventories, layer
stacks and parameter counts.

Family knowledge is data (``op_profiles/*.yaml``); this layer holds the flavours every family shares and reads the
data. It imports only :mod:`pipeline.spec`. A cache of checked profiles is handed in from above, never imported.
"""
