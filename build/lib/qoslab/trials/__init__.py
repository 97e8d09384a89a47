"""What a campaign plans and stores, below both the runner (:mod:`qoslab.campaign`) and the
statistics (:mod:`qoslab.stats`), which read it and never each other:

- :mod:`.playbook`: the playbook model (pydantic, pure) and the trial schedule; reading one with
  every reference checked is the runner's (:func:`qoslab.campaign.load_playbook`);
- :mod:`.factors`: a factorial playbook's conditions; :mod:`.comparisons`: the comparisons its
  matrix calls for;
- :mod:`.store`: ``trials.sqlite``, its schema and read/write API (the only module that speaks
  SQL); :mod:`.row`: one trial's row; :mod:`.fsguard`: what a run may write in its folder.
"""
