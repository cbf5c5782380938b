"""The Chainlit chat UI, a thin shell over the turn loop: accounts and access, uploads, previews, stored threads."""
