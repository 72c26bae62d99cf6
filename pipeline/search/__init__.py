"""Search backends behind one interface (BEIR's): ``index(docs)`` and ``search({qid: text}, k) -> {qid: {doc_id:
score}}``. ``base`` is the interface, ``factory.make_backend`` picks one, ``analysis`` is the English analysis
both backends share."""
