package api

import "github.com/gofiber/fiber/v2"

func (s *Server) getInvoices(c *fiber.Ctx) error {
	list, err := s.Invoices(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return c.JSON(list)
}

func (s *Server) getInvoice(c *fiber.Ctx) error {
	b, err := s.Invoice(c.UserContext(), c.Params("tid"), c.Params("id"))
	if err != nil {
		return err
	}
	return sendJSONBytes(c, b)
}

func (s *Server) getUpcomingInvoice(c *fiber.Ctx) error {
	b, err := s.UpcomingInvoice(c.UserContext(), c.Params("tid"))
	if err != nil {
		return err
	}
	return sendJSONBytes(c, b)
}

// sendJSONBytes answers JSON already encoded (a frozen invoice's stored
// bytes are sent as they are).
func sendJSONBytes(c *fiber.Ctx, b []byte) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(b)
}
